#include <type_traits>
#include <vector>

#include "kernels/nonzero/nonzero.h"

namespace parity {

namespace {
template <typename T> bool is_nonzero(T v) {
  if constexpr (std::is_same_v<T, Half>) {
    return (v.bits & 0x7fffu) != 0;  // NaN has mantissa bits set; +-0 has none
  } else if constexpr (std::is_floating_point_v<T>) {
    return !(v == T(0));  // true for NaN, false for -0.0
  } else {
    return v != T(0);
  }
}
}  // namespace

Tensor nonzero_ref(const NonzeroParams& p, const Tensor& x) {
  check_inputs(NonzeroParams::kName, p.inputs(), {x});
  std::vector<int64_t> flat;
  visit_dtype(p.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* v = x.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      if (is_nonzero(v[i])) flat.push_back(i);
    }
  });
  const auto rank = int64_t(p.x.rank());
  Tensor out(DType::Int64, Shape{int64_t(flat.size()), rank});
  int64_t* o = out.mutable_data<int64_t>();
  for (size_t k = 0; k < flat.size(); ++k) {
    int64_t rest = flat[k];
    for (int64_t d = rank - 1; d >= 0; --d) {
      o[int64_t(k) * rank + d] = rest % p.x[size_t(d)];
      rest /= p.x[size_t(d)];
    }
  }
  return out;
}

}  // namespace parity
