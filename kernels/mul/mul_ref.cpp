#include <type_traits>

#include "core/thread_pool.h"
#include "kernels/mul/mul.h"

namespace parity {

Tensor mul_ref(const MulParams& p, const Tensor& x, const Tensor& y) {
  check_inputs(MulParams::kName, p.inputs(), {x, y});
  Tensor out(p.dtype, p.x);
  visit_dtype(p.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int32_t> ||
                  std::is_same_v<T, int64_t>) {
      const T *a = x.data<T>(), *b = y.data<T>();
      T* o = out.mutable_data<T>();
      parallel_for(out.numel(), 1 << 16, [&](int64_t s, int64_t e) {
        for (int64_t i = s; i < e; ++i) {
          if constexpr (std::is_floating_point_v<T>) {
            o[i] = a[i] * b[i];
          } else {  // two's complement wrap-around without signed-overflow UB
            using U = std::make_unsigned_t<T>;
            o[i] = T(U(a[i]) * U(b[i]));
          }
        }
      });
    }
  });
  return out;
}

}  // namespace parity
