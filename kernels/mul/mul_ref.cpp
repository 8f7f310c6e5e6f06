#include "kernels/mul/mul.h"
#include "kernels/ref_util.h"

namespace parity {

Tensor mul_ref(const MulParams& p, const Tensor& x, const Tensor& y) {
  check_inputs(MulParams::kName, p.inputs(), {x, y});
  return zip_ref(x, y, [](auto a, auto b) { return decltype(a)(a * b); });
}

}  // namespace parity
