#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "kernels/nms/nms.h"

namespace parity {

Tensor nms_ref(const NmsParams& p, const std::vector<Tensor>& in) {
  check_inputs(NmsParams::kName, p.inputs(), in);
  const Tensor boxes = nms_offset_boxes(p, in);
  const float* b = boxes.data<float>();
  const float* s = in[1].data<float>();
  const auto n = size_t(p.n);

  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) {
    if (std::isnan(s[i]) || std::isnan(s[j])) return std::isnan(s[i]) && !std::isnan(s[j]);
    return s[i] > s[j];
  });

  std::vector<float> area(n);
  for (size_t i = 0; i < n; ++i) area[i] = nms_area(b, int64_t(i));

  // Greedy: visit by score, keep a box unless a kept box suppressed it. Which later boxes a kept
  // box suppresses does not depend on the order they are tried in, so only the boxes the x grid
  // says may overlap it are tried (all of them when the grid cannot be used), and the grid
  // forgets the boxes the pass is done with.
  std::vector<char> suppressed(n, 0);
  std::vector<size_t> position(n);  // in visiting order
  for (size_t a = 0; a < n; ++a) position[size_t(order[a])] = a;
  NmsXGrid grid(b, int64_t(n));
  if (grid.usable()) {
    for (size_t i = 0; i < n; ++i) grid.add(int64_t(i));
  }
  std::vector<int64_t> keep;
  for (size_t a = 0; a < n; ++a) {
    const int64_t i = order[a];
    if (suppressed[size_t(i)]) continue;
    keep.push_back(i);
    // Whether box j is done with afterwards: visited already (kept or suppressed), or suppressed
    // now. Later kept boxes come later in the order, so they never try it again.
    const auto try_suppress = [&](int64_t j) {
      if (position[size_t(j)] <= a || suppressed[size_t(j)]) return true;
      if (double(nms_iou(b, i, j, area[size_t(i)], area[size_t(j)])) > p.iou) suppressed[size_t(j)] = 1;
      return bool(suppressed[size_t(j)]);
    };
    if (grid.usable()) {
      grid.for_each_near_dropping(i, try_suppress);
    } else {
      for (size_t c = a + 1; c < n; ++c) try_suppress(order[c]);
    }
  }
  Tensor out(DType::Int64, Shape{int64_t(keep.size())});
  std::copy(keep.begin(), keep.end(), out.mutable_data<int64_t>());
  return out;
}

}  // namespace parity
