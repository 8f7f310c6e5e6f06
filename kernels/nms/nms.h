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
// Line: nms boxes=Nx4 iou=T [batched [max_wh=7680]]   (inputs boxes, scores[, classes])
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

  static NmsParams parse(std::string_view line);  // validates
  std::string str() const;
  std::vector<TensorSpec> inputs() const;
};

Tensor nms_ref(const NmsParams& p, const std::vector<Tensor>& in);
Tensor nms_aten(const NmsParams& p, const std::vector<Tensor>& in);

// The boxes nms works on: in batched mode boxes + class * max_wh (float32), else boxes itself.
Tensor nms_offset_boxes(const NmsParams& p, const std::vector<Tensor>& in);

OpFn nms_op(decltype(&nms_ref) fn);

}  // namespace parity
