#pragma once
// nms as torchvision.ops.nms: boxes [N,4] float32 as x1,y1,x2,y2, scores [N] float32, IoU
// threshold. Box area is (x2-x1)*(y2-y1), no +1. Visiting boxes by descending score, a box is
// kept unless a kept box overlaps it with IoU > threshold. Output: kept indices, int64, in
// visiting order. IoU is computed in float32 exactly as torchvision's CPU kernel does, so the
// decisions at the threshold are torchvision's.
//
// Ties: equal scores are visited lower index first (a stable sort). torchvision's sort is not
// stable, so its order among equal scores is unspecified; compare classifies such differences.
// NaN scores sort above every number, as torch.sort puts them.
//
// batched: YOLOv5's class-aware NMS (utils/general.py non_max_suppression): every box is
// shifted by class * max_wh (7680) in float32 so boxes of different classes never overlap,
// then nms as above. The third input holds the class of each box as float32, as YOLOv5 keeps
// it in column 5.
// by_class: torchvision.ops.batched_nms: boxes whose idxs (int64) differ never suppress each
// other; `precision=bf16|fp16` where its boxes ran in that type. torchvision takes one of two
// paths by box count and device (per class on the CPU above 4000 coordinates, one nms of boxes
// shifted by idxs * (max coordinate + 1) below, and on CUDA up to 20000): the shifted boxes' IoUs
// round otherwise than the raw ones, so an answer is valid when either path's IoUs make it one.
// The reference runs the shifted path.
// Line: nms boxes=Nx4 iou=T [batched [max_wh=7680] | by_class]   (inputs boxes, scores[, classes | idxs])
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/backend.h"

namespace parity {

struct NmsParams {
  static constexpr const char* kName = "nms";
  int64_t n = 0;
  double iou = 0.5;
  bool batched = false;
  double max_wh = 7680;
  bool by_class = false;

  template <class Self, class F> static void fields(Self& p, F& f) {  // the line's fields, in order (kernels/op_line.h)
    f.rows("boxes", p.n, 4);
    f.real("iou", p.iou);
    f.flag("batched", p.batched);
    f.real("max_wh", p.max_wh, 7680);
    f.flag("by_class", p.by_class);
  }
  static NmsParams parse(std::string_view line);  // validates
  std::string str() const;
  void validate() const;
  std::vector<TensorSpec> inputs() const;
};

// Area and IoU of boxes of a [N,4] x1y1x2y2 array, in float32 with torchvision's operation
// order (so every decision at the threshold is torchvision's). Areas are passed in because the
// greedy loop computes each once. Shared by the reference, the compare classifier and the CUDA
// kernel (host and device), with std::max/std::min's exact semantics spelled out for the device.
#ifdef __CUDACC__
#define PARITY_HOST_DEVICE __host__ __device__
#else
#define PARITY_HOST_DEVICE
#endif
PARITY_HOST_DEVICE inline float nms_max(float a, float b) { return a < b ? b : a; }  // std::max
PARITY_HOST_DEVICE inline float nms_min(float a, float b) { return b < a ? b : a; }  // std::min
PARITY_HOST_DEVICE inline float nms_area(const float* b, int64_t i) {
  return (b[i * 4 + 2] - b[i * 4]) * (b[i * 4 + 3] - b[i * 4 + 1]);
}
// IoU of box a (the earlier in visiting order) and box b, each x1,y1,x2,y2.
PARITY_HOST_DEVICE inline float nms_iou_pair(const float* a, const float* b, float area_a, float area_b) {
  const float w = nms_max(0.0f, nms_min(a[2], b[2]) - nms_max(a[0], b[0]));
  const float h = nms_max(0.0f, nms_min(a[3], b[3]) - nms_max(a[1], b[1]));
  const float inter = w * h;
  return inter / (area_a + area_b - inter);
}
PARITY_HOST_DEVICE inline float nms_iou(const float* b, int64_t i, int64_t j, float area_i, float area_j) {
  return nms_iou_pair(b + i * 4, b + j * 4, area_i, area_j);
}

// Which boxes can overlap a box: the greedy loops' prefilter. Two boxes whose x ranges do not
// overlap with positive length have an intersection of 0, so an IoU of 0 or NaN, never above a
// threshold >= 0; only pairs sharing x are worth computing. Boxes are registered in every cell
// of a uniform grid over x that their [x1, x2] covers; two ranges that overlap share the cell of
// any point in both (the cell is monotonic in x), so no pair that matters is ever missed. Boxes
// with x1 >= x2 or NaN overlap nothing and are never returned. With class offsets (batched nms)
// each class is a band of its own, which turns YOLOv5's 30,000-candidate O(N^2) loop into
// milliseconds. usable() is false when an x coordinate is infinite: callers then scan all pairs.
class NmsXGrid {
 public:
  NmsXGrid(const float* boxes, int64_t n);  // boxes [n,4] x1,y1,x2,y2; kept by pointer
  bool usable() const { return usable_; }
  void add(int64_t i);  // register box i
  // Calls f(j) once for every registered box j whose cells meet box i's. Not thread-safe.
  template <typename F> void for_each_near(int64_t i, F&& f) const {
    if (!overlaps_anything(i)) return;
    ++query_;
    for (int64_t c = cell(boxes_[i * 4]), last = cell(boxes_[i * 4 + 2]); c <= last; ++c) {
      for (const int64_t j : cells_[size_t(c)]) {
        if (seen_[size_t(j)] != query_) seen_[size_t(j)] = query_, f(j);
      }
    }
  }
  // for_each_near for a pass that is done with boxes for good (greedy nms: a box visited or
  // suppressed is never tried again): done(j) is asked once per box met, and a box it says is
  // done with is dropped from every cell it is met in, so later queries scan only live boxes.
  template <typename F> void for_each_near_dropping(int64_t i, F&& done) {
    if (!overlaps_anything(i)) return;
    if (drop_.empty()) drop_.assign(seen_.size(), 0);
    ++query_;
    for (int64_t c = cell(boxes_[i * 4]), last = cell(boxes_[i * 4 + 2]); c <= last; ++c) {
      std::vector<int64_t>& boxes = cells_[size_t(c)];
      size_t kept = 0;
      for (const int64_t j : boxes) {
        if (drop_[size_t(j)]) continue;  // done with, found so in another cell
        if (seen_[size_t(j)] != query_) {
          seen_[size_t(j)] = query_;
          if (done(j)) {
            drop_[size_t(j)] = 1;
            continue;
          }
        }
        boxes[kept++] = j;
      }
      boxes.resize(kept);
    }
  }

 private:
  bool overlaps_anything(int64_t i) const { return boxes_[i * 4] < boxes_[i * 4 + 2]; }  // false for NaN too
  int64_t cell(float x) const;

  const float* boxes_;
  bool usable_ = true;
  double x0_ = 0, width_ = 1;
  std::vector<std::vector<int64_t>> cells_;
  mutable std::vector<int64_t> seen_;  // the query that last returned each box
  mutable int64_t query_ = 0;
  std::vector<char> drop_;  // for_each_near_dropping's boxes done with (sized on its first call)
};

Tensor nms_ref(const NmsParams& p, const std::vector<Tensor>& in);
// torchvision's own nms (torchvision::nms through LibTorch's dispatcher) when its library loads,
// else nms_composed_aten; nms_aten_kind() says which, and why not torchvision's.
Tensor nms_aten(const NmsParams& p, const std::vector<Tensor>& in);
Tensor nms_composed_aten(const NmsParams& p, const Tensor& shifted_boxes, const Tensor& scores);
std::string nms_aten_kind();
// The project's CUDA kernel (<op>_cuda.cu; built with nvcc, runs where a GPU is present).
Tensor nms_cuda(const NmsParams& p, const std::vector<Tensor>& in);

// The boxes nms works on: in batched mode boxes + class * max_wh (float32), by_class boxes +
// idxs * (max coordinate + 1) (torchvision's batched_nms below its size threshold, each step in the
// boxes' type: float32, or `h` where they ran in a half type, `precision=` on the line), else
// boxes itself.
Tensor nms_offset_boxes(const NmsParams& p, const std::vector<Tensor>& in, HalfType h = HalfType::None);

OpFn nms_op(decltype(&nms_ref) fn);

struct OpTraits;
OpTraits nms_traits();

// The aten plugin's entries for nms (kernels/aten/plugin.h, AtenPlugin::nms_kind, nms_composed),
// defined in nms_aten.cpp.
const char* aten_nms_kind();
Tensor aten_nms_composed(const std::string& line, const std::vector<Tensor>& in);

}  // namespace parity
