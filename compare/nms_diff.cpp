#include "compare/nms_diff.h"

#include <algorithm>
#include <map>
#include <set>

#include "kernels/nms/nms.h"

namespace parity {

std::string NmsDiff::str() const {
  return std::to_string(differences) + " differences: " + std::to_string(ties) + " score ties, " +
         std::to_string(near_threshold) + " near the threshold, " + std::to_string(unexplained) + " unexplained";
}

NmsDiff classify_nms_difference(const Tensor& boxes, const Tensor& scores, double thr, const Tensor& keep_a,
                                const Tensor& keep_b, double delta) {
  const float* b = boxes.data<float>();
  const float* s = scores.data<float>();
  const int64_t n = scores.numel();
  auto iou = [&](int64_t i, int64_t j) { return double(nms_iou(b, i, j, nms_area(b, i), nms_area(b, j))); };
  std::map<int64_t, int64_t> rank_a, rank_b;
  for (int64_t k = 0; k < keep_a.numel(); ++k) rank_a[keep_a.data<int64_t>()[k]] = k;
  for (int64_t k = 0; k < keep_b.numel(); ++k) rank_b[keep_b.data<int64_t>()[k]] = k;
  std::set<int64_t> differing;
  for (const auto& [box, r] : rank_a) {
    const auto it = rank_b.find(box);
    if (it == rank_b.end() || it->second != r) differing.insert(box);
  }
  for (const auto& [box, r] : rank_b) {
    if (!rank_a.count(box)) differing.insert(box);
  }
  NmsDiff d;
  d.differences = int64_t(differing.size());
  for (const int64_t x : differing) {
    if (x < 0 || x >= n) {  // an index out of range explains nothing
      ++d.unexplained;
      if (d.first_unexplained < 0) d.first_unexplained = x;
      continue;
    }
    const bool in_both = rank_a.count(x) && rank_b.count(x);
    bool tie = false, near = false;
    for (int64_t y = 0; y < n && !tie; ++y) {
      if (y == x || s[y] != s[x]) continue;
      // Same score: either only their order differs (both kept on both sides), or they compete.
      tie = in_both || iou(x, y) > thr - delta;
    }
    if (!tie) {
      for (const auto* ranks : {&rank_a, &rank_b}) {
        for (const auto& [k, r] : *ranks) {
          if (k != x && k >= 0 && k < n && s[k] >= s[x] && std::abs(iou(x, k) - thr) <= delta) near = true;
        }
      }
    }
    if (tie) {
      ++d.ties;
    } else if (near) {
      ++d.near_threshold;
    } else {
      ++d.unexplained;
      if (d.first_unexplained < 0) d.first_unexplained = x;
    }
  }
  return d;
}

}  // namespace parity

namespace parity {

TensorDiff judge_output(const std::string& line, const std::vector<Tensor>& inputs, const Tensor& expected, const Tensor& actual,
                        const Tolerance& tol) {
  TensorDiff d = compare_tensors(expected, actual, tol);
  if (d.state == State::Failed && !d.structural && op_name_of(line) == "nms") {
    const NmsParams p = NmsParams::parse(line);
    const NmsDiff n = classify_nms_difference(nms_offset_boxes(p, inputs), inputs[1], p.iou, expected, actual);
    if (n.unexplained == 0) {
      d.state = State::Passed;
      d.reason = "keep lists differ, all explained: " + n.str();
    } else {
      d.reason = "keep lists differ: " + n.str() + "; first unexplained box " + std::to_string(n.first_unexplained);
    }
  }
  return d;
}

}  // namespace parity
