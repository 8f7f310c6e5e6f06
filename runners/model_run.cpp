#include "runners/model_run.h"

#include <sys/statvfs.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <regex>

#include "cases/yolov5.h"
#include "compare/dump_reader.h"
#include "core/error.h"
#include "core/gpu.h"
#include "core/hash.h"
#include "core/npy.h"
#include "core/rng.h"
#include "core/stopwatch.h"
#include "kernels/backend.h"
#include "runners/dump.h"
#include "runners/weights.h"

namespace parity {

namespace {

// Runs one op on the backend, timing it and dumping it when its name matches.
class LayerRunner {
 public:
  LayerRunner(const Backend& b, DumpWriter* dump, const std::string& filter, HalfType dtype)
      : backend_(b), dump_(dump), filter_(filter.empty() ? ".*" : filter), dtype_(dtype) {}

  struct In {
    Tensor t;
    std::string source;  // "<layer>:out0" it is or is derived from; empty for the image and weights
  };

  Tensor run(const std::string& name, const Call& as_built, const std::vector<In>& in) {
    const Call call = dtype_ == HalfType::None ? as_built : Call(with_half(as_built.line(), dtype_));
    std::vector<Tensor> ts;
    for (const In& i : in) ts.push_back(i.t);
    // The host glue between post-processing layers computes in float32; a half run's layers take
    // its results as values of their type, as val.py's glue in half makes them.
    round_floats(ts, call.half());
    const Stopwatch watch;
    std::vector<Tensor> out;
    try {
      // No half kernel for it on this backend (LibTorch's CPU has no float16 convolution, no half
      // nms): it runs in float32, rounded (run_in_type), so the next layer takes what a half
      // kernel would give within its rounding and the dump's dataflow holds. Said once per op on
      // stderr and in the manifest (run.float32_kernels); the line keeps its precision=, which
      // the judge holds it to.
      std::string why_float32;
      out = run_in_type(backend_, call, ts, &why_float32);
      if (!why_float32.empty() && noted_.insert(call.op()).second) {
        std::fprintf(stderr, "parity run: %s; %s layers run in float32 on this backend, rounded to %s\n", why_float32.c_str(),
                     call.op().c_str(), half_name(call.half()));
      }
    } catch (Error& e) {
      e.layer(name);
      throw;
    }
    const double ms = watch.ms();
    total_ms += ms;
    ++layers;
    if (dump_) {
      std::vector<In> as_run = in;  // the inputs as the call took them (rounded in a half run)
      for (size_t k = 0; k < as_run.size(); ++k) as_run[k].t = ts[k];
      record(name, call, ms, as_run, out);
    }
    return out[0];
  }

  double total_ms = 0;
  int64_t layers = 0;

 private:
  void record(const std::string& name, const Call& call, double ms, const std::vector<In>& in,
              const std::vector<Tensor>& out) {
    std::vector<DumpTensor> dout;
    for (size_t k = 0; k < out.size(); ++k) dout.push_back({output_role(k), "", out[k]});
    if (!std::regex_search(name, filter_)) {
      dump_->skip_layer(name, dout);
      return;
    }
    std::vector<DumpTensor> din;
    for (size_t k = 0; k < in.size(); ++k) din.push_back({call.inputs()[k].name, in[k].source, in[k].t});
    dump_->add_layer(name, call.line(), ms, din, dout);
  }

  const Backend& backend_;
  DumpWriter* dump_;
  std::regex filter_;
  HalfType dtype_;
  std::set<std::string> noted_;  // ops said to run in float32

 public:
  // The ops run in float32 for want of a half kernel, "conv2d, nms", or "".
  std::string float32_kernels() const {
    std::string s;
    for (const std::string& op : noted_) s += (s.empty() ? "" : ", ") + op;
    return s;
  }
};

// Columns [c0, c1) of a 2-D float32 tensor.
Tensor columns(const Tensor& x, int64_t c0, int64_t c1) {
  const int64_t n = x.shape()[0], w = x.shape()[1];
  Tensor out(DType::Float32, Shape{n, c1 - c0});
  for (int64_t r = 0; r < n; ++r) {
    std::memcpy(out.mutable_data<float>() + r * (c1 - c0), x.data<float>() + r * w + c0, size_t(c1 - c0) * 4);
  }
  return out;
}

// x[..., c] of a float32 tensor: its shape without the last dimension.
Tensor column(const Tensor& x, int64_t c) {
  std::vector<int64_t> dims = x.shape().dims();
  const int64_t w = dims.back();
  dims.pop_back();
  Tensor out(DType::Float32, Shape(dims));
  for (int64_t r = 0; r < out.numel(); ++r) out.mutable_data<float>()[r] = x.data<float>()[r * w + c];
  return out;
}

Tensor first_rows(const Tensor& t, int64_t n) {
  std::vector<int64_t> dims = t.shape().dims();
  const size_t row = dims[0] ? t.nbytes() / size_t(dims[0]) : 0;
  dims[0] = n;
  Tensor out(t.dtype(), Shape(dims));
  if (out.nbytes()) std::memcpy(out.mutable_bytes(), t.bytes(), size_t(n) * row);
  return out;
}

Tensor int64_column(const Tensor& pairs, int64_t col, int64_t add) {
  const int64_t k = pairs.shape()[0];
  Tensor out(DType::Int64, Shape{k});
  for (int64_t r = 0; r < k; ++r) out.mutable_data<int64_t>()[r] = pairs.data<int64_t>()[r * 2 + col] + add;
  return out;
}

// val.py's non_max_suppression for image xi of the Detect output pred [B, N, 85] (produced as
// `pred_source`). Every input names the layer output it is taken from, however it was reshaped.
int64_t postprocess_image(LayerRunner& run, const Tensor& pred, const std::string& pred_source, const Tensor& xc, int64_t xi) {
  const int64_t n_pred = pred.shape()[1], no = pred.shape()[2];
  const std::string base = "nms." + std::to_string(xi);
  Tensor img(DType::Float32, Shape{n_pred, no}), mask(DType::Bool, Shape{n_pred});
  std::memcpy(img.mutable_bytes(), pred.bytes() + size_t(xi) * img.nbytes(), img.nbytes());
  std::memcpy(mask.mutable_bytes(), xc.bytes() + size_t(xi * n_pred), size_t(n_pred));
  // x = x[xc[xi]]
  // A copy of the layer's output: the dump writer may still be reading it when x changes below.
  Tensor x = run.run(base + ".x", ValNms::candidates_of(n_pred, no), {{img, pred_source}, {mask, "nms.xc:out0"}}).clone();
  const int64_t n = x.shape()[0];
  if (n == 0) return 0;
  // x[:, 5:] *= x[:, 4:5]; box = xywh2xyxy(x[:, :4])   (float32, as torch computes them)
  float* xp = x.mutable_data<float>();
  Tensor box(DType::Float32, Shape{n, 4});
  float* bp = box.mutable_data<float>();
  for (int64_t r = 0; r < n; ++r) {
    float* row = xp + r * no;
    for (int64_t c = 5; c < no; ++c) row[c] = row[c] * row[4];
    const float hw = row[2] / 2, hh = row[3] / 2;
    bp[r * 4 + 0] = row[0] - hw, bp[r * 4 + 1] = row[1] - hh, bp[r * 4 + 2] = row[0] + hw, bp[r * 4 + 3] = row[1] + hh;
  }
  const std::string src_x = base + ".x:out0", src_ij = base + ".multi_label.nonzero:out0";
  const std::string src_det = base + ".multi_label.cat:out0", src_sorted = base + ".sorted:out0";
  // i, j = (x[:, 5:] > conf_thres).nonzero(as_tuple=False).T
  const Tensor cls = columns(x, 5, no);
  const Tensor gt = run.run(base + ".multi_label.gt", ValNms::class_test(n, no - 5), {{cls, src_x}});
  const Tensor ij = run.run(base + ".multi_label.nonzero", ValNms::class_pairs(n, no - 5), {{gt, base + ".multi_label.gt:out0"}});
  const int64_t k = ij.shape()[0];
  if (k == 0) return 0;
  const Tensor i = int64_column(ij, 0, 0), j5 = int64_column(ij, 1, 5);
  // torch.cat((box[i], x[i, 5 + j, None], j[:, None].float()), 1)
  const Tensor bi = run.run(base + ".multi_label.box", ValNms::pair_boxes(n, k), {{box, src_x}, {i, src_ij}});
  Tensor conf = run.run(base + ".multi_label.conf", ValNms::pair_scores(n, no, k), {{x, src_x}, {i, src_ij}, {j5, src_ij}});
  Tensor jf(DType::Float32, Shape{k, 1});
  for (int64_t r = 0; r < k; ++r) jf.mutable_data<float>()[r] = float(j5.data<int64_t>()[r] - 5);
  Tensor conf_col(DType::Float32, Shape{k, 1});
  std::memcpy(conf_col.mutable_bytes(), conf.bytes(), conf.nbytes());
  Tensor det = run.run(base + ".multi_label.cat", ValNms::detections(k),
                       {{bi, base + ".multi_label.box:out0"}, {conf_col, base + ".multi_label.conf:out0"}, {jf, src_ij}});
  // x = x[x[:, 4].argsort(descending=True)[:max_nms]]
  const Tensor order = run.run(base + ".sort", ValNms::score_order(k), {{column(det, 4), src_det}});
  Tensor order1d(DType::Int64, Shape{std::min(k, ValNms::max_nms)});
  std::memcpy(order1d.mutable_bytes(), order.bytes(), order1d.nbytes());
  det = run.run(base + ".sorted", ValNms::sorted_detections(k, order1d.numel()), {{det, src_det}, {order1d, base + ".sort:out0"}});
  // boxes + c, torchvision.ops.nms(boxes, scores, iou_thres) with c = class * max_wh
  const Tensor keep = run.run(base + ".nms", ValNms::suppression(order1d.numel()),
                              {{columns(det, 0, 4), src_sorted}, {column(det, 4), src_sorted}, {column(det, 5), src_sorted}});
  // output[xi] = x[i[:max_det]]
  const int64_t kept = std::min(keep.numel(), ValNms::max_det);
  const Tensor out = run.run(base + ".output", ValNms::output(det.shape()[0], kept),
                             {{det, src_sorted}, {first_rows(keep, kept), base + ".nms:out0"}});
  return out.shape()[0];
}

// What a dump of this run was computed from; the weights digest chains them in key order.
DumpRun provenance_of(const RunOptions& o, const Weights& w, const Tensor& image) {
  std::vector<const Tensor*> weights;
  for (const auto& [key, t] : w) weights.push_back(&t);
  return {o.img, o.batch, o.weights.empty() ? "seeded" : o.weights, chained_content_hash(weights),
          o.input.empty() ? "seeded" : o.input, content_hash(image), o.dtype == HalfType::None ? "" : half_name(o.dtype), ""};
}

int64_t free_bytes(const std::string& dir) {
  struct statvfs s {};
  if (::statvfs(dir.c_str(), &s) != 0) return -1;
  return int64_t(s.f_bavail) * int64_t(s.f_frsize);
}

}  // namespace

RunResult run_model(const RunOptions& o, const std::function<void(int64_t, int64_t, const std::string&)>& progress) {
  const Yolov5Variant& variant = yolov5_variant(o.model);
  const Graph g = yolov5_graph(variant, o.img, o.batch);
  const Backend& be = backend(o.backend);
  if (const std::string why = be.unavailable_reason(); !why.empty()) throw Error("backend " + o.backend + " cannot run here: " + why);

  RunResult result;
  // Every layer output once, inputs that no layer produced (image, parameters), and for the
  // post-processing six copies of the predictions (its inputs and outputs are slices and
  // selections of them; a run with far more class pairs than usual can exceed this, and then
  // an out-of-space error still leaves the dump without a manifest, never torn).
  result.estimated_bytes = g.input.byte_size(4);
  for (const GraphNode& n : g.nodes) result.estimated_bytes += n.output.byte_size(4);
  for (const auto& [key, shape] : g.params) result.estimated_bytes += shape.byte_size(4);
  if (o.postprocess) result.estimated_bytes += 6 * g.nodes.back().output.byte_size(4);

  std::unique_ptr<DumpWriter> dump;
  if (!o.dump_dir.empty()) {
    const std::string device = runs_on_gpu(o.backend) && gpu_status().available ? gpu_status().device : "cpu";
    dump = std::make_unique<DumpWriter>(o.dump_dir, DumpInfo{o.model, o.backend, device, o.seed}, o.force);
    const int64_t avail = free_bytes(o.dump_dir);
    if (avail >= 0 && avail < result.estimated_bytes) {
      throw Error("the dump needs about " + std::to_string(result.estimated_bytes >> 20) + " MiB, the file system has " +
                  std::to_string(avail >> 20) + " MiB free")
          .file(o.dump_dir);
    }
  }

  Weights w = load_weights(variant, g, o.weights, o.seed);
  Tensor image(DType::Float32, g.input);
  if (o.input.empty()) {
    RngStream(o.seed, "input:" + o.model, 0).fill_uniform(image, 0, 1);  // YOLOv5 feeds pixels / 255
  } else {
    image = read_npy(o.input);
    if (image.dtype() != DType::Float32 || image.shape() != g.input) {
      throw Error("holds " + std::string(dtype_name(image.dtype())) + " " + image.shape().str() + ", the model needs float32 " +
                  g.input.str())
          .file(o.input);
    }
  }

  if (o.dtype != HalfType::None) {  // a half run's weights and image are values of its type, as model.half() makes them
    for (auto& [key, t] : w) t = rounded_to(t, o.dtype);
    image = rounded_to(image, o.dtype);
  }
  if (dump) dump->set_run(provenance_of(o, w, image));

  // A layer's output is kept until its last consumer has run.
  std::vector<int64_t> last_use(g.nodes.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (const Operand& op : g.nodes[i].inputs) {
      if (op.kind == Operand::Kind::Node) last_use[size_t(op.node)] = int64_t(i);
    }
  }
  last_use.back() = int64_t(g.nodes.size());
  std::vector<Tensor> values(g.nodes.size());
  be.begin_run();
  LayerRunner run(be, dump.get(), o.layers, o.dtype);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const GraphNode& n = g.nodes[i];
    if (progress) progress(int64_t(i), int64_t(g.nodes.size()), n.name);
    std::vector<LayerRunner::In> in;
    for (const Operand& op : n.inputs) {
      switch (op.kind) {
        case Operand::Kind::Input: in.push_back({image, ""}); break;
        case Operand::Kind::Param: in.push_back({w.at(op.param), ""}); break;
        case Operand::Kind::Node: in.push_back({values[size_t(op.node)], g.nodes[size_t(op.node)].name + ":out0"}); break;
      }
    }
    values[i] = run.run(n.name, Call(n.line), in);
    for (const Operand& op : n.inputs) {
      if (op.kind == Operand::Kind::Node && last_use[size_t(op.node)] == int64_t(i)) values[size_t(op.node)] = Tensor();
    }
  }

  if (o.postprocess) {
    const Tensor& pred = values.back();  // [B, N, 85]
    const std::string pred_source = g.nodes.back().name + ":out0";
    if (progress) progress(int64_t(g.nodes.size()), int64_t(g.nodes.size()), "post-processing");
    const Tensor obj = column(pred, 4);  // [B, N]
    // xc = prediction[..., 4] > conf_thres
    const Tensor xc = run.run("nms.xc", ValNms::objectness(obj.shape()[0], obj.shape()[1]), {{obj, pred_source}});
    for (int64_t xi = 0; xi < pred.shape()[0]; ++xi) {
      result.detections.push_back(postprocess_image(run, pred, pred_source, xc, xi));
    }
  }
  be.end_run();  // before the manifest: a run whose planted defect never struck leaves no complete dump
  result.layers = run.layers;
  result.total_ms = run.total_ms;
  if (dump) {
    if (const std::string f32 = run.float32_kernels(); !f32.empty()) {
      DumpRun provenance = provenance_of(o, w, image);
      provenance.float32_kernels = f32 + " (no " + std::string(half_name(o.dtype)) + " kernel on " + o.backend + ")";
      dump->set_run(provenance);
    }
    dump->finish();
    result.dump_bytes = dump->bytes_written();
    result.dump_write_s = dump->write_seconds(), result.dump_sync_s = dump->sync_seconds();
  }
  return result;
}

}  // namespace parity
