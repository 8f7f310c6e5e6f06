#include "kernels/nms/nms.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "kernels/op_line.h"
#include "kernels/op_traits.h"
#include "kernels/order_checks.h"

namespace parity {

NmsParams NmsParams::parse(std::string_view line) { return parse_fields<NmsParams>(line); }

std::string NmsParams::str() const { return print_fields(*this); }

void NmsParams::validate() const {
  const std::string boxes = Shape{n, 4}.str();
  if (!(iou >= 0 && iou <= 1)) throw Error("nms: iou threshold must be in [0, 1] (boxes=" + boxes + ")");
  if (!batched && max_wh != 7680) throw Error("nms: max_wh applies to batched nms only");
  if (!(max_wh > 0) || !std::isfinite(max_wh)) throw Error("nms: max_wh must be positive");
  if (batched && by_class) throw Error("nms: batched (YOLOv5's class shift) and by_class (torchvision's batched_nms) exclude each other");
}

std::vector<TensorSpec> NmsParams::inputs() const {
  std::vector<TensorSpec> in = {{"boxes", DType::Float32, Shape{n, 4}}, {"scores", DType::Float32, Shape{n}}};
  if (batched) in.push_back({"classes", DType::Float32, Shape{n}});
  if (by_class) in.push_back({"idxs", DType::Int64, Shape{n}});
  return in;
}

namespace {
// torchvision's _batched_nms_coordinate_trick: offsets = idxs.to(boxes) * (boxes.max() + 1), added
// to every coordinate, each step in the boxes' own type: float32, or the half type `h` they ran
// in (a detector under autocast or in float16 on a GPU; its nms then takes them to float32).
Tensor class_shifted_boxes(const Tensor& boxes, const Tensor& idxs, HalfType h) {
  Tensor out(DType::Float32, boxes.shape());
  const int64_t n = idxs.numel();
  if (n == 0) return out;
  const float* b = boxes.data<float>();
  const int64_t* c = idxs.data<int64_t>();
  float top = b[0];
  for (int64_t k = 1; k < n * 4; ++k) top = std::isnan(b[k]) || std::isnan(top) ? NAN : std::max(top, b[k]);
  const float step = round_to(top + 1.0f, h);
  float* o = out.mutable_data<float>();
  for (int64_t i = 0; i < n; ++i) {
    const float shift = round_to(round_to(float(c[i]), h) * step, h);
    for (int k = 0; k < 4; ++k) o[i * 4 + k] = round_to(b[i * 4 + k] + shift, h);
  }
  return out;
}
}  // namespace

Tensor nms_offset_boxes(const NmsParams& p, const std::vector<Tensor>& in, HalfType h) {
  if (p.by_class) return class_shifted_boxes(in[0], in[2], h);
  if (!p.batched) return in[0];
  Tensor out(DType::Float32, Shape{p.n, 4});
  const float *b = in[0].data<float>(), *c = in[2].data<float>();
  float* o = out.mutable_data<float>();
  const auto max_wh = float(p.max_wh);
  for (int64_t i = 0; i < p.n; ++i) {
    const float shift = c[i] * max_wh;  // float32 product then float32 sums, as YOLOv5 on torch
    for (int k = 0; k < 4; ++k) o[i * 4 + k] = b[i * 4 + k] + shift;
  }
  return out;
}

NmsXGrid::NmsXGrid(const float* boxes, int64_t n) : boxes_(boxes), seen_(size_t(n), -1) {
  double lo = 0, hi = 0;
  std::vector<double> widths;
  for (int64_t i = 0; i < n; ++i) {
    const float x1 = boxes[i * 4], x2 = boxes[i * 4 + 2];
    if (std::isinf(x1) || std::isinf(x2)) usable_ = false;
    if (!overlaps_anything(i)) continue;
    lo = widths.empty() ? x1 : std::min(lo, double(x1));
    hi = widths.empty() ? x2 : std::max(hi, double(x2));
    widths.push_back(double(x2) - double(x1));
  }
  if (!usable_ || widths.empty()) return;
  // Cells as wide as the median box: a typical box spans one or two, and the count stays below n.
  std::nth_element(widths.begin(), widths.begin() + ptrdiff_t(widths.size() / 2), widths.end());
  x0_ = lo;
  width_ = std::max(widths[widths.size() / 2], (hi - lo) / double(n));
  if (!(width_ > 0)) width_ = 1;
  cells_.resize(size_t(std::min<double>(std::floor((hi - lo) / width_) + 1, double(n) + 1)));
}

int64_t NmsXGrid::cell(float x) const {
  const double c = std::floor((double(x) - x0_) / width_);  // monotonic in x: rounding is
  return int64_t(std::clamp(c, 0.0, double(cells_.size()) - 1));
}

void NmsXGrid::add(int64_t i) {
  if (!overlaps_anything(i)) return;
  for (int64_t c = cell(boxes_[i * 4]), last = cell(boxes_[i * 4 + 2]); c <= last; ++c) cells_[size_t(c)].push_back(i);
}

OpFn nms_op(decltype(&nms_ref) fn) {
  return bind_op<NmsParams>([fn](const NmsParams& p, const std::vector<Tensor>& in) { return std::vector<Tensor>{fn(p, in)}; });
}

namespace {

// Valid boxes in a 640 x 640 frame: centre anywhere, sides 4..200 px, clipped to the frame.
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

bool seed_nms_input(const Call&, const TensorSpec& s, const RngStream& rng, double, Tensor& t) {
  if (s.name == "boxes") {
    fill_boxes(t, rng);
  } else if (s.name == "idxs") {
    int64_t* p = t.mutable_data<int64_t>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = rng.integer(uint64_t(i), 0, 5);
  } else if (s.name == "classes") {
    float* p = t.mutable_data<float>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = float(rng.integer(uint64_t(i), 0, 80));
  } else {
    rng.fill_uniform(t, 0x1p-20, 1);  // scores in (0, 1)
  }
  return true;
}

}  // namespace

OpTraits nms_traits() {
  OpTraits t = traits_for<NmsParams>(nms_op(nms_ref), PARITY_CUDA_OP(nms_op(nms_cuda)));
  t.examples = {"nms boxes=100x4 iou=0.6 batched", "nms boxes=100x4 iou=0.5 by_class"};
  t.seed_input = seed_nms_input;
  t.check_answer = [](const Call& call, const std::vector<Tensor>& in, const Tensor& keep) {
    const NmsParams p = call.params<NmsParams>();
    NmsCheck c = check_nms_keep(nms_offset_boxes(p, in, call.half()), in[1], p.iou, keep);
    if (!c.valid && p.by_class) c = check_nms_keep_by_class(in[0], in[1], in[2], p.iou, keep);  // the per-class path
    return AnswerCheck{c.valid,
                       "a valid NMS of its inputs: " + std::to_string(c.ties) + " decisions on score ties, " +
                           std::to_string(c.near_threshold) + " IoUs within 1e-5 of the threshold",
                       "keep list is not a valid NMS of its inputs: " + c.violation};
  };
  auto any = [](const Call&, const std::vector<Tensor>&) { return true; };
  t.defects = {{"nms_tie", Defect::Strikes::OneCall, Defect::Gives::CorrectAnswer, any,
                [](const Call& call, const std::vector<Tensor>& in, const OpFn& ref) {
                  // The first two kept boxes of equal score in swapped order: a legitimate tie
                  // order, which compare must pass.
                  std::vector<Tensor> out = ref(call, in);
                  int64_t* keep = out[0].mutable_data<int64_t>();
                  const float* scores = in[1].data<float>();
                  for (int64_t k = 0; k + 1 < out[0].numel(); ++k) {
                    if (scores[keep[k]] == scores[keep[k + 1]]) {
                      std::swap(keep[k], keep[k + 1]);
                      break;
                    }
                  }
                  return out;
                }},
               // The first box visited is always kept, so any box at all gives a box to drop.
               {"nms_drop", Defect::Strikes::OneCall, Defect::Gives::WrongAnswer, [](const Call& call, const std::vector<Tensor>&) { return call.params<NmsParams>().n > 0; },
                [](const Call& call, const std::vector<Tensor>& in, const OpFn& ref) {
                  std::vector<Tensor> out = ref(call, in);
                  const Tensor& y = out[0];
                  Tensor rest(DType::Int64, Shape{y.numel() - 1});
                  std::copy(y.data<int64_t>() + 1, y.data<int64_t>() + y.numel(), rest.mutable_data<int64_t>());
                  out[0] = rest;
                  return out;
                }}};
  return t;
}

}  // namespace parity
