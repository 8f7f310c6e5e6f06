#pragma once
// Helpers shared by reference kernels.
#include <type_traits>

#include "core/thread_pool.h"
#include "core/tensor.h"

namespace parity {

// y[i] = f(x[i]) computed in float64 and rounded once to x's dtype (float32 or float64).
template <typename F> Tensor map_in_f64(const Tensor& x, F f) {
  Tensor y(x.dtype(), x.shape());
  auto loop = [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.data<T>();
    T* out = y.mutable_data<T>();
    parallel_for(x.numel(), 1 << 15, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) out[i] = T(f(double(in[i])));
    });
  };
  if (x.dtype() == DType::Float64) {
    loop(double{});
  } else {
    loop(float{});
  }
  return y;
}

// z[i] = f(x[i], y[i]) for two tensors of one shape and dtype (float32, float64, int32, int64),
// f called with both elements as that dtype. Integers reach f as the unsigned type of their
// width, so f's wrap-around is defined behaviour, as torch's integer arithmetic wraps.
template <typename F> Tensor zip_ref(const Tensor& x, const Tensor& y, F f) {
  Tensor z(x.dtype(), x.shape());
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int32_t> ||
                  std::is_same_v<T, int64_t>) {
      using A = wrapping_t<T>;
      const T *a = x.data<T>(), *b = y.data<T>();
      T* o = z.mutable_data<T>();
      parallel_for(z.numel(), 1 << 16, [&](int64_t s, int64_t e) {
        for (int64_t i = s; i < e; ++i) o[i] = T(f(A(a[i]), A(b[i])));
      });
    }
  });
  return z;
}

}  // namespace parity
