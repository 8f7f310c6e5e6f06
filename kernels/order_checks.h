#pragma once
// Judges for the ops whose correct output is not unique. Rather than comparing an output with
// another backend's, each decides whether the output is one that a correct kernel may give.
//
// nms (torchvision semantics, kernels/nms/nms.h) leaves float32 implementations two freedoms:
//   tie             boxes of equal score may be visited in any order (torchvision's sort is not
//                   stable), so the order of equal-score kept boxes, and which of two
//                   overlapping equal-score boxes survives, are open;
//   near-threshold  an IoU within δ of the threshold may be decided either way (another
//                   operation order, FMA or a GPU division moves an IoU by a few ulps; δ = 1e-5
//                   is a few float32 ulps of an IoU near 0.5).
// argsort leaves the first only: equal keys in any order.
// NaN scores and keys rank above every number, as nms.h and argsort.h document, and tie with
// each other.
#include <cstdint>
#include <string>

#include "core/tensor.h"

namespace parity {

struct NmsCheck {
  bool valid = true;
  // Decisions that relied on a freedom: adjacent kept boxes of equal score, and suppressed
  // boxes that only a kept box of equal score suppresses.
  int64_t ties = 0;
  // Decisions taken at an IoU within δ of the threshold: kept pairs whose IoU is above it, and
  // suppressed boxes whose suppressing IoU is not. A suppressed box counts under the
  // explanation that needs the fewest freedoms, which may be both.
  int64_t near_threshold = 0;
  std::string violation;  // the first violation found, one line naming the box; empty when valid
};

// Whether `keep` (int64 [K]) is a greedy-NMS result for `boxes` ([N,4] float32, already
// class-offset as nms_offset_boxes gives) and `scores` ([N] float32), up to the freedoms above.
// Valid iff the indices are distinct boxes, listed in non-increasing score, no kept box overlaps
// one kept before it with IoU > threshold + δ, and every other box is overlapped with
// IoU > threshold - δ by a kept box of higher or equal score. IoUs are the reference's, bit for
// bit (nms_iou). Checking stops at the first violation, so the counts are complete only when
// valid. Pairs that share no x range are skipped where that is exact (kernels/nms/nms.h's
// NmsXGrid); `all_pairs` scores every pair, O(N·K), for tests. Throws parity::Error for malformed
// boxes or scores, or a δ not >= 0.
NmsCheck check_nms_keep(const Tensor& boxes, const Tensor& scores, double iou_threshold, const Tensor& keep,
                        double delta = 1e-5, bool all_pairs = false);

// torchvision's batched_nms on its per-class path: `keep` lists boxes in non-increasing score,
// and the kept boxes of each class (`classes`, int64 [N]) are a valid NMS of that class's boxes
// alone, raw coordinates, as check_nms_keep says. A violation inside a class numbers that class's
// boxes among themselves, and says so.
NmsCheck check_nms_keep_by_class(const Tensor& boxes, const Tensor& scores, const Tensor& classes, double iou_threshold,
                                 const Tensor& keep, double delta = 1e-5);

struct OrderCheck {
  bool valid = true;
  int64_t ties = 0;       // adjacent positions holding equal keys
  std::string violation;  // the first violation found, one line naming the index; empty when valid
};

// Whether `order` (int64 [N]) is an argsort of `x` ([N] float32): a permutation of [0,N) along
// which x is non-increasing (descending) or non-decreasing, NaN ranking highest. Throws
// parity::Error for a malformed x.
OrderCheck check_argsort(const Tensor& x, bool descending, const Tensor& order);

}  // namespace parity
