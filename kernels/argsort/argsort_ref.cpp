#include <algorithm>
#include <cmath>
#include <numeric>

#include "kernels/argsort/argsort.h"

namespace parity {

Tensor argsort_ref(const ArgsortParams& p, const Tensor& x) {
  check_inputs(ArgsortParams::kName, p.inputs(), {x});
  const float* v = x.data<float>();
  Tensor out(DType::Int64, p.x);
  int64_t* o = out.mutable_data<int64_t>();
  std::iota(o, o + x.numel(), 0);
  // "a before b" in ascending order, NaN last (largest); descending reverses the value order
  // but not the tie order.
  auto less = [v](int64_t a, int64_t b) {
    if (std::isnan(v[a]) || std::isnan(v[b])) return !std::isnan(v[a]) && std::isnan(v[b]);
    return v[a] < v[b];
  };
  if (p.descending) {
    std::stable_sort(o, o + x.numel(), [&](int64_t a, int64_t b) { return less(b, a); });
  } else {
    std::stable_sort(o, o + x.numel(), less);
  }
  return out;
}

}  // namespace parity
