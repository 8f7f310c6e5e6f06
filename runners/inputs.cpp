#include "runners/inputs.h"

#include <cmath>

#include "core/error.h"
#include "core/npy.h"
#include "core/rng.h"
#include "kernels/backend.h"
#include "kernels/conv2d/conv2d.h"
#include "kernels/index/index.h"

namespace parity {

namespace {

// Valid boxes in an img x img frame: centre anywhere, sides 4..200 px, clipped to the frame.
void fill_boxes(Tensor& t, const RngStream& rng) {
  float* b = t.mutable_data<float>();
  for (int64_t i = 0; i < t.shape()[0]; ++i) {
    const uint64_t k = uint64_t(i) * 4;
    const float cx = rng.uniform_f32(k, 0, 640), cy = rng.uniform_f32(k + 1, 0, 640);
    const float w = rng.uniform_f32(k + 2, 4, 200), h = rng.uniform_f32(k + 3, 4, 200);
    b[i * 4 + 0] = std::max(0.0f, cx - w / 2);
    b[i * 4 + 1] = std::max(0.0f, cy - h / 2);
    b[i * 4 + 2] = std::min(640.0f, cx + w / 2);
    b[i * 4 + 3] = std::min(640.0f, cy + h / 2);
  }
}

// The value range of input `name` of op `op` (floats).
std::pair<double, double> float_range(const std::string& op, const std::string& name, const Case& c) {
  if (op == "conv2d" && (name == "w" || name == "b")) {
    // PyTorch's default init for conv weights and bias: U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
    const double bound = 1.0 / std::sqrt(double(Conv2dParams::parse(c.line).reduction_length()));
    return {-bound, bound};
  }
  if (op == "silu" || op == "sigmoid") return {-8, 8};
  if (op == "detect_decode") return {-6, 6};
  if (op == "threshold" || op == "argsort" || op == "max_dim") return {0, 1};
  if (op == "nms" && name == "scores") return {0x1p-20, 1};  // (0, 1)
  if (op == "nms" && name == "classes") return {0, 80};
  return {-1, 1};
}

}  // namespace

std::vector<Tensor> seeded_inputs(const Case& c, uint64_t seed) {
  const std::string op = op_name_of(c.line);
  std::vector<Tensor> out;
  uint32_t k = 0;
  for (const TensorSpec& s : op_inputs(c.line)) {
    Tensor t(s.dtype, s.shape);
    const RngStream rng(seed, c.line, k++);
    if (op == "nms" && s.name == "boxes") {
      fill_boxes(t, rng);
    } else if (op == "nms" && s.name == "classes") {
      float* p = t.mutable_data<float>();
      for (int64_t i = 0; i < t.numel(); ++i) p[i] = float(rng.integer(uint64_t(i), 0, 80));
    } else if (op == "index" && s.dtype == DType::Int64) {
      // Indices in range of the dimension they index: idx -> the selected dim, i -> dim 0, j -> dim 1.
      const IndexParams p = IndexParams::parse(c.line);
      const int64_t size = s.name == "idx" ? p.x[size_t(p.resolved_dim())] : s.name == "i" ? p.x[0] : p.x[1];
      if (size > 0) rng.fill_uniform(t, 0, double(size));
    } else if (s.dtype == DType::Bool || op == "nonzero") {
      rng.fill_bernoulli(t, c.density);
    } else if (is_floating(s.dtype)) {
      const auto [lo, hi] = float_range(op, s.name, c);
      rng.fill_uniform(t, lo, hi);
    } else {
      rng.fill_uniform(t, s.dtype == DType::UInt8 ? 0 : -1000, s.dtype == DType::UInt8 ? 256 : 1000);
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<Tensor> inputs_from_folder(const Case& c, const std::string& dir) {
  std::vector<Tensor> out;
  for (const TensorSpec& s : op_inputs(c.line)) {
    const std::string path = dir + "/" + c.name + "." + s.name + ".npy";
    Tensor t = read_npy(path);
    if (t.dtype() != s.dtype || t.shape() != s.shape) {
      throw Error("holds " + std::string(dtype_name(t.dtype())) + " " + t.shape().str() + ", the case needs " +
                  std::string(dtype_name(s.dtype)) + " " + s.shape.str())
          .file(path);
    }
    out.push_back(std::move(t));
  }
  return out;
}

const DumpLayer* dump_layer_for(const Case& c, const Dump& d, std::string& why_not) {
  const std::string call = canonical_line(c.line);
  std::string other;  // a layer of the case's name that runs another call, for the reason
  for (const DumpLayer& l : d.layers) {
    if (l.name != c.name) continue;
    std::string line;
    try {
      line = canonical_line(l.params);
    } catch (const Error&) {
      line = l.params;  // an op parity does not know: never the case's call
    }
    if (line == call) return &l;
    other = l.params;
  }
  why_not = other.empty() ? "no layer " + c.name + " in " + d.dir
                          : "layer " + c.name + " of " + d.dir + " runs '" + other + "', not this call";
  return nullptr;
}

std::vector<Tensor> inputs_from_dump(const Case& c, const Dump& d, const DumpLayer& l) {
  std::vector<Tensor> out;
  for (const TensorSpec& s : op_inputs(c.line)) {
    const DumpTensorInfo* t = nullptr;
    for (const DumpTensorInfo& x : l.inputs) t = x.role == s.name ? &x : t;
    if (!t) throw Error("the dump records no input '" + s.name + "' for this layer").file(d.dir);
    out.push_back(d.load(*t));  // dtype, shape and hash checked against the manifest
  }
  check_inputs(op_name_of(c.line), op_inputs(c.line), out);
  return out;
}

}  // namespace parity
