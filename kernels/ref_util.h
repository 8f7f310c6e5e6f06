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

}  // namespace parity
