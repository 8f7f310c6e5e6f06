#include "kernels/add/add.h"
#include "kernels/ref_util.h"

namespace parity {

Tensor add_ref(const AddParams& p, const Tensor& x, const Tensor& y) {
  check_inputs(AddParams::kName, p.inputs(), {x, y});
  return zip_ref(x, y, [](auto a, auto b) {
    using A = decltype(a);
    if constexpr (std::is_floating_point_v<A>) {
      return A(double(a) + double(b));  // float32: the exact sum, rounded once
    } else {
      return A(a + b);
    }
  });
}

}  // namespace parity
