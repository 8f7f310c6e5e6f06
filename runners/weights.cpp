#include "runners/weights.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <mutex>

#include "core/error.h"
#include "core/npy.h"
#include "core/rng.h"
#include "core/stats.h"
#include "kernels/aten/plugin.h"
#include "kernels/backend.h"

namespace parity {

namespace {

// Large enough that the 32-stride layers see a 10x10 map (at 64x64 their 2x2 maps are mostly
// padding, and the scales found there blow activations up twentyfold at 640); yolov5s at 640
// then keeps every activation's standard deviation between 0.5 and 1.
constexpr int64_t kCalibrationImage = 320;

Weights checked(const Graph& g, std::map<std::string, Tensor> found, const std::string& source) {
  Weights w;
  for (const auto& [key, shape] : g.params) {
    const auto it = found.find(key);
    if (it == found.end()) throw Error("has no parameter " + key + " (" + shape.str() + ")").file(source);
    if (!is_floating(it->second.dtype())) {
      throw Error("parameter " + key + " is " + std::string(dtype_name(it->second.dtype())) + ", not floating").file(source);
    }
    if (it->second.shape() != shape) {
      throw Error("parameter " + key + " is " + it->second.shape().str() + ", the model needs " + shape.str()).file(source);
    }
    w[key] = float_values_as(it->second, DType::Float32);  // exact for float16; float64 rounds once
  }
  return w;
}

}  // namespace

Weights seeded_weights(const Yolov5Variant& v, uint64_t seed) {
  // The calibration costs a reference forward at 320x320: done once per process and model.
  static std::mutex mutex;
  static std::map<std::pair<std::string, uint64_t>, Weights> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto& cached = cache[{v.name, seed}];
  if (cached.empty()) cached = calibrated_weights(v, seed);
  return cached;
}

Weights calibrated_weights(const Yolov5Variant& v, uint64_t seed) {
  // Calibrated on one fixed batch-1 image size: the same parameters for every run size.
  const Graph g = yolov5_graph(v, kCalibrationImage, 1);
  Weights w;
  for (const auto& [key, shape] : g.params) {
    Tensor t(DType::Float32, shape);
    const RngStream rng(seed, "weights:" + key, 0);
    const bool bias = key.size() > 5 && key.compare(key.size() - 5, 5, ".bias") == 0;
    const double b = bias ? 0.1 : std::sqrt(6.0 / double(shape[1] * shape[2] * shape[3]));
    rng.fill_uniform(t, -b, b);
    w[key] = t;
  }
  // Layer by layer on the reference: scale the parameters of each layer that has some (the convs'
  // weight and bias) so that its output has the target standard deviation over the calibration
  // image (He's rule alone lets the signal shrink or grow tenfold across 60 layers with residual
  // adds and concatenations).
  Tensor image(DType::Float32, g.input);
  RngStream(seed, "calibration-input", 0).fill_uniform(image, 0, 1);
  std::vector<Tensor> values(g.nodes.size());
  const Backend& ref = backend("ref");
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const GraphNode& n = g.nodes[i];
    std::vector<Tensor> in;
    for (const Operand& op : n.inputs) {
      in.push_back(op.kind == Operand::Kind::Input ? image : op.kind == Operand::Kind::Param ? w.at(op.param) : values[size_t(op.node)]);
    }
    values[i] = ref.run(n.line, in)[0];
    const bool holds_weights =
        std::any_of(n.inputs.begin(), n.inputs.end(), [](const Operand& op) { return op.kind == Operand::Kind::Param; });
    if (!holds_weights) continue;
    const TensorStats s = compute_stats(values[i]);
    if (!(s.std > 0)) continue;
    const auto scale = float(1.0 / s.std);
    for (const Operand& op : n.inputs) {
      if (op.kind != Operand::Kind::Param) continue;
      Tensor& p = w.at(op.param);
      float* d = p.mutable_data<float>();
      for (int64_t k = 0; k < p.numel(); ++k) d[k] *= scale;
      in[&op - n.inputs.data()] = p;
    }
    values[i] = ref.run(n.line, in)[0];
  }
  // YOLOv5 _initialize_biases: Detect level i (stride 8 << i), per anchor: [x, y, w, h, obj, classes...].
  for (int level = 0; level < 3; ++level) {
    Tensor& bias = w.at("model.24.m." + std::to_string(level) + ".bias");
    float* b = bias.mutable_data<float>();
    const int64_t no = 85, stride = int64_t(8) << level;
    for (int64_t a = 0; a < bias.numel() / no; ++a) {
      b[a * no + 4] += float(std::log(8.0 / std::pow(640.0 / double(stride), 2)));
      for (int64_t c = 5; c < no; ++c) b[a * no + c] += float(std::log(0.6 / (80 - 0.99)));
    }
  }
  return w;
}

Weights load_weights(const Yolov5Variant& v, const Graph& g, const std::string& source, uint64_t seed) {
  if (source.empty()) return seeded_weights(v, seed);
  std::error_code ec;
  if (std::filesystem::is_directory(source, ec)) {
    std::map<std::string, Tensor> found;
    for (const auto& [key, shape] : g.params) {
      const std::string path = source + "/" + key + ".npy";
      if (!std::filesystem::exists(path, ec)) throw Error("missing parameter file for " + key + " (" + shape.str() + ")").file(path);
      found[key] = read_npy(path);
    }
    return checked(g, std::move(found), source);
  }
  if (!std::filesystem::exists(source, ec)) throw Error("no such weights file or folder").file(source);
  const auto read = aten_plugin().read_torchscript;
  return checked(g, read(source), source);
}

}  // namespace parity
