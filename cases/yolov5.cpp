#include "cases/yolov5.h"

#include <cmath>

#include "core/error.h"
#include "core/shape.h"
#include "kernels/argsort/argsort.h"
#include "kernels/cat/cat.h"
#include "kernels/conv2d/conv2d.h"
#include "kernels/detect_decode/detect_decode.h"
#include "kernels/index/index.h"
#include "kernels/maxpool2d/maxpool2d.h"
#include "kernels/nms/nms.h"
#include "kernels/nonzero/nonzero.h"
#include "kernels/op_line.h"
#include "kernels/threshold/threshold.h"

namespace parity {

namespace {

constexpr int64_t kClasses = 80, kAnchorsPerLevel = 3, kOutputs = kClasses + 5;

// Builds the graph while tracking the shape of every module output, like a forward hook.
// Ops that are not modules of their own take their parent's path plus a suffix: a C3's or
// SPPF's concatenation is `<module>.cat`, a Bottleneck's residual add is the Bottleneck itself.
class Builder {
 public:
  struct Value {
    int node;  // -1: the graph input
    Shape shape;
  };

  Builder(const Yolov5Variant& v, Shape input) : v_(v) { graph.input = std::move(input); }

  Value input() const { return {-1, graph.input}; }
  int64_t width(int64_t c) const { return int64_t(std::ceil(double(c) * v_.width_multiple / 8)) * 8; }
  int64_t depth(int64_t n) const { return n > 1 ? std::max<int64_t>(int64_t(std::round(double(n) * v_.depth_multiple)), 1) : n; }

  // nn.Conv2d with bias: a BatchNorm-folded Conv's conv, or a Detect output conv.
  Value conv2d(const std::string& name, const Value& x, int64_t c2, int64_t k, int64_t s, int64_t pad) {
    Conv2dParams p;
    p.x = x.shape;
    p.w = Shape{c2, x.shape[1], k, k};
    p.bias = true;
    p.stride_h = p.stride_w = s;
    p.pad_h = p.pad_w = pad;
    p.validate();
    graph.params.push_back({name + ".weight", p.w});
    graph.params.push_back({name + ".bias", Shape{c2}});
    return add(name, p.str(), {activation(x), Operand{Operand::Kind::Param, -1, name + ".weight"},
                               Operand{Operand::Kind::Param, -1, name + ".bias"}},
               p.output_shape());
  }

  // models/common.py Conv: conv2d (bias from the folded BatchNorm), then SiLU.
  Value conv(const std::string& name, const Value& x, int64_t c2, int64_t k, int64_t s, int64_t pad = -1) {
    const Value y = conv2d(name + ".conv", x, c2, k, s, pad < 0 ? k / 2 : pad);  // autopad unless the yaml gives it
    return add(name + ".act", "silu x=" + y.shape.str(), {activation(y)}, y.shape);
  }

  // models/common.py Bottleneck(c1, c2, shortcut, e=1.0).
  Value bottleneck(const std::string& name, const Value& x, int64_t c2, bool shortcut) {
    const Value y = conv(name + ".cv2", conv(name + ".cv1", x, c2, 1, 1), c2, 3, 1);
    if (!shortcut || x.shape[1] != c2) return y;
    return add(name, "add x=" + y.shape.str(), {activation(x), activation(y)}, y.shape);
  }

  // models/common.py C3(c1, c2, n, shortcut, e=0.5): cv3(cat(m(cv1(x)), cv2(x))).
  Value c3(const std::string& name, const Value& x, int64_t c2, int64_t n, bool shortcut) {
    const int64_t c_ = c2 / 2;
    Value m = conv(name + ".cv1", x, c_, 1, 1);
    for (int64_t i = 0; i < n; ++i) m = bottleneck(name + ".m." + std::to_string(i), m, c_, shortcut);
    const Value b = conv(name + ".cv2", x, c_, 1, 1);
    return conv(name + ".cv3", concat(name + ".cat", {m, b}), c2, 1, 1);
  }

  // models/common.py SPPF(c1, c2, k=5): x = cv1(input); cv2(cat(x, m(x), m(m(x)), m(m(m(x))))).
  // One module called three times: later calls are named module:call.
  Value sppf(const std::string& name, const Value& x, int64_t c2) {
    const Value y = conv(name + ".cv1", x, x.shape[1] / 2, 1, 1);
    std::vector<Value> parts = {y};
    for (const char* call : {"", ":1", ":2"}) {
      const Value& prev = parts.back();
      parts.push_back(add(name + ".m" + call, "maxpool2d x=" + prev.shape.str() + " k=5 stride=1 pad=2", {activation(prev)},
                          prev.shape));
    }
    return conv(name + ".cv2", concat(name + ".cat", parts), c2, 1, 1);
  }

  Value upsample(const std::string& name, const Value& x) {
    const Shape& s = x.shape;
    return add(name, "upsample_nearest2d x=" + s.str() + " scale=2", {activation(x)}, Shape{s[0], s[1], s[2] * 2, s[3] * 2});
  }

  Value concat(const std::string& name, const std::vector<Value>& xs) {
    CatParams p;
    std::vector<Operand> in;
    for (const Value& x : xs) p.xs.push_back(x.shape), in.push_back(activation(x));
    p.dim = 1;
    return add(name, p.str(), in, p.output_shape());
  }

  // models/yolo.py Detect: per level a 1x1 conv to na*no channels (with bias), the decode,
  // then the levels joined along the anchor dimension: [bs, sum(na*ny*nx), no].
  void detect(const std::string& name, const std::vector<Value>& levels) {
    std::vector<Value> decoded;
    for (size_t i = 0; i < levels.size(); ++i) {
      const Value c = conv2d(name + ".m." + std::to_string(i), levels[i], kAnchorsPerLevel * kOutputs, 1, 1, 0);
      DetectDecodeParams d;
      d.x = c.shape;
      d.stride = int64_t(8) << i;
      d.anchors = yolov5_anchors()[i];
      decoded.push_back(add(name + ".decode." + std::to_string(i), d.str(), {activation(c)}, d.output_shape()));
    }
    concat(name, decoded);
  }

  Graph graph;

 private:
  static Operand activation(const Value& v) {
    return v.node < 0 ? Operand{Operand::Kind::Input, -1, ""} : Operand{Operand::Kind::Node, v.node, ""};
  }

  Value add(std::string name, std::string line, std::vector<Operand> inputs, Shape out) {
    graph.nodes.push_back({std::move(name), std::move(line), std::move(inputs), out});
    return {int(graph.nodes.size()) - 1, std::move(out)};
  }

  const Yolov5Variant& v_;
};

}  // namespace

const Yolov5Variant& yolov5_variant(const std::string& name) {
  static const std::vector<Yolov5Variant> variants = {
      {"yolov5n", 0.33, 0.25}, {"yolov5s", 0.33, 0.50}, {"yolov5m", 0.67, 0.75},
      {"yolov5l", 1.0, 1.0},   {"yolov5x", 1.33, 1.25},
  };
  for (const auto& v : variants) {
    if (v.name == name) return v;
  }
  throw Error("unknown model '" + name + "' (known: yolov5n yolov5s yolov5m yolov5l yolov5x)");
}

std::vector<std::string> yolov5_variant_names() { return {"yolov5n", "yolov5s", "yolov5m", "yolov5l", "yolov5x"}; }

const std::vector<std::vector<double>>& yolov5_anchors() {
  static const std::vector<std::vector<double>> anchors = {
      {10, 13, 16, 30, 33, 23}, {30, 61, 62, 45, 59, 119}, {116, 90, 156, 198, 373, 326}};
  return anchors;
}

Graph yolov5_graph(const Yolov5Variant& v, int64_t img, int64_t batch) {
  if (img <= 0 || img % 32 != 0) throw Error("image size " + std::to_string(img) + " is not a positive multiple of 32");
  if (batch <= 0) throw Error("batch must be positive, got " + std::to_string(batch));
  Builder b(v, Shape{batch, 3, img, img});
  auto w = [&](int64_t c) { return b.width(c); };
  auto d = [&](int64_t n) { return b.depth(n); };
  // Backbone.
  const auto x0 = b.conv("model.0", b.input(), w(64), 6, 2, 2);
  const auto x1 = b.conv("model.1", x0, w(128), 3, 2);
  const auto x2 = b.c3("model.2", x1, w(128), d(3), true);
  const auto x3 = b.conv("model.3", x2, w(256), 3, 2);
  const auto x4 = b.c3("model.4", x3, w(256), d(6), true);
  const auto x5 = b.conv("model.5", x4, w(512), 3, 2);
  const auto x6 = b.c3("model.6", x5, w(512), d(9), true);
  const auto x7 = b.conv("model.7", x6, w(1024), 3, 2);
  const auto x8 = b.c3("model.8", x7, w(1024), d(3), true);
  const auto x9 = b.sppf("model.9", x8, w(1024));
  // Head.
  const auto x10 = b.conv("model.10", x9, w(512), 1, 1);
  const auto x11 = b.upsample("model.11", x10);
  const auto x12 = b.concat("model.12", {x11, x6});
  const auto x13 = b.c3("model.13", x12, w(512), d(3), false);
  const auto x14 = b.conv("model.14", x13, w(256), 1, 1);
  const auto x15 = b.upsample("model.15", x14);
  const auto x16 = b.concat("model.16", {x15, x4});
  const auto x17 = b.c3("model.17", x16, w(256), d(3), false);
  const auto x18 = b.conv("model.18", x17, w(256), 3, 2);
  const auto x19 = b.concat("model.19", {x18, x14});
  const auto x20 = b.c3("model.20", x19, w(512), d(3), false);
  const auto x21 = b.conv("model.21", x20, w(512), 3, 2);
  const auto x22 = b.concat("model.22", {x21, x10});
  const auto x23 = b.c3("model.23", x22, w(1024), d(3), false);
  b.detect("model.24", {x17, x20, x23});
  return std::move(b.graph);
}

std::vector<Case> yolov5_forward(const Yolov5Variant& v, int64_t img, int64_t batch) {
  std::vector<Case> cases;
  for (const GraphNode& n : yolov5_graph(v, img, batch).nodes) {
    Case c;
    c.name = n.name;
    c.line = n.line;
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace parity

namespace parity {

namespace {
Case make_case(const std::string& name, const std::string& line, double density = 0.5) {
  Case c;
  c.name = name;
  c.line = canonical_line(line);
  c.density = density;
  return c;
}
}  // namespace

namespace {

// An index call on x: a boolean mask of n rows (Mask), n rows of dim 0 (Select), or n (row,
// column) pairs (Pairs).
Call index_call(IndexParams::Mode mode, const Shape& x, int64_t n) {
  IndexParams p;
  p.mode = mode;
  p.x = x;
  if (mode == IndexParams::Mode::Mask) p.mask = Shape{n};
  p.n = n;
  return Call::of(p);
}

}  // namespace

Call ValNms::objectness(int64_t batch, int64_t preds) { return Call::of(ThresholdParams{Shape{batch, preds}, conf_thres}); }
Call ValNms::candidates_of(int64_t preds, int64_t outputs) {
  return index_call(IndexParams::Mode::Mask, Shape{preds, outputs}, preds);
}
Call ValNms::class_test(int64_t candidates, int64_t classes) { return Call::of(ThresholdParams{Shape{candidates, classes}, conf_thres}); }
Call ValNms::class_pairs(int64_t candidates, int64_t classes) { return Call::of(NonzeroParams{Shape{candidates, classes}}); }
Call ValNms::pair_boxes(int64_t candidates, int64_t pairs) { return index_call(IndexParams::Mode::Select, Shape{candidates, 4}, pairs); }
Call ValNms::pair_scores(int64_t candidates, int64_t outputs, int64_t pairs) {
  return index_call(IndexParams::Mode::Pairs, Shape{candidates, outputs}, pairs);
}
Call ValNms::detections(int64_t pairs) { return Call::of(CatParams{{Shape{pairs, 4}, Shape{pairs, 1}, Shape{pairs, 1}}, 1}); }
Call ValNms::score_order(int64_t pairs) { return Call::of(ArgsortParams{Shape{pairs}, true}); }
Call ValNms::sorted_detections(int64_t pairs, int64_t sorted) { return index_call(IndexParams::Mode::Select, Shape{pairs, 6}, sorted); }
Call ValNms::suppression(int64_t sorted) { return Call::of(NmsParams{sorted, iou_thres, true}); }
Call ValNms::output(int64_t sorted, int64_t kept) { return index_call(IndexParams::Mode::Select, Shape{sorted, 6}, kept); }

std::vector<Case> yolov5_postprocess(int64_t img, int64_t batch) {
  if (img <= 0 || img % 32 != 0) throw Error("image size " + std::to_string(img) + " is not a positive multiple of 32");
  // Predictions per image: three anchors per cell of the 8-, 16- and 32-stride grids.
  const int64_t preds = kAnchorsPerLevel * ((img / 8) * (img / 8) + (img / 16) * (img / 16) + (img / 32) * (img / 32));
  // Realistic counts for a trained model at conf_thres 0.001, scaled with the prediction count:
  // 40% of predictions pass the objectness test, and 0.5% of (candidate, class) pairs the
  // class-confidence one (4032 pairs at 640, "several thousand" boxes into nms).
  const int64_t candidates = preds * 2 / 5, pairs = std::max<int64_t>(1, candidates * kClasses / 200);
  const int64_t sorted = std::min(pairs, ValNms::max_nms), keep = std::min(ValNms::max_det, sorted);
  const int64_t labels = 20;  // ground-truth boxes of a COCO image, typical
  const auto step = [](const std::string& name, const Call& call, double density = 0.5) { return make_case(name, call.line(), density); };
  std::vector<Case> out = {
      step("nms.xc", ValNms::objectness(batch, preds)),
      step("nms.x", ValNms::candidates_of(preds, kOutputs), double(candidates) / double(preds)),
      step("nms.multi_label.gt", ValNms::class_test(candidates, kClasses)),
      step("nms.multi_label.nonzero", ValNms::class_pairs(candidates, kClasses), double(pairs) / double(candidates * kClasses)),
      step("nms.multi_label.box", ValNms::pair_boxes(candidates, pairs)),
      step("nms.multi_label.conf", ValNms::pair_scores(candidates, kOutputs, pairs)),
      step("nms.multi_label.cat", ValNms::detections(pairs)),
      step("nms.sort", ValNms::score_order(pairs)),
      step("nms.sorted", ValNms::sorted_detections(pairs, sorted)),
      step("nms.nms", ValNms::suppression(sorted)),
      step("nms.output", ValNms::output(sorted, keep)),
  };
  // val.py process_batch: for each IoU threshold t of 0.5:0.95,
  //   x = torch.where((iou >= t) & correct_class); matches = cat(stack(x, 1), iou[x[0], x[1]][:, None])
  // Shown for t = 0.5 (about 3 matches per label) and t = 0.95 (a few in all).
  const std::string L = std::to_string(labels) + "x" + std::to_string(keep);
  for (const auto& [t, matches] : {std::pair<const char*, int64_t>{"0.5", 60}, {"0.95", 6}}) {
    const std::string M = std::to_string(matches), base = std::string("val.process_batch.iou") + t;
    out.push_back(make_case(base + ".where", "nonzero x=" + L, double(matches) / double(labels * keep)));
    out.push_back(make_case(base + ".iou", "index x=" + L + " pairs=" + M));
    out.push_back(make_case(base + ".cat", "cat x=" + M + "x2," + M + "x1 dim=1"));
  }
  return out;
}

}  // namespace parity
