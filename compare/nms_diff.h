#pragma once
// Classifying the differences between two NMS keep lists of the same boxes and scores.
//
// A box kept by one side and not the other, or kept at a different rank, is explained as
//   tie            it has the score of another box it overlaps above the threshold - δ (which
//                  of the two a greedy NMS keeps depends only on how equal scores are ordered),
//                  or the lists differ only by reordering equal scores;
//   near-threshold its IoU with a box kept before it lies within δ of the threshold (float32
//                  rounding may legitimately decide either way);
// and as unexplained otherwise. δ defaults to 1e-5, a few float32 ulps of an IoU near 0.5.
#include <cstdint>
#include <string>

#include <vector>

#include "compare/tensor_compare.h"
#include "core/tensor.h"

namespace parity {

struct NmsDiff {
  int64_t differences = 0, ties = 0, near_threshold = 0, unexplained = 0;
  int64_t first_unexplained = -1;  // a box index
  std::string str() const;        // "3 differences: 2 score ties, 1 near the threshold"
};

// boxes [N,4] float32 (already class-shifted for batched NMS), scores [N], keep lists int64.
NmsDiff classify_nms_difference(const Tensor& boxes, const Tensor& scores, double iou_threshold, const Tensor& keep_a,
                                const Tensor& keep_b, double delta = 1e-5);

// One output of an op call judged against its expected value: compare_tensors under `tol`,
// and for nms a differing keep list PASSES when every difference is explained.
TensorDiff judge_output(const std::string& line, const std::vector<Tensor>& inputs, const Tensor& expected, const Tensor& actual,
                        const Tolerance& tol);

}  // namespace parity
