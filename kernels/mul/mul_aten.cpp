#include "kernels/mul/mul.h"

#include <ATen/ops/mul.h>

#include "kernels/aten/util.h"

namespace parity {

Tensor mul_aten(const MulParams& p, const Tensor& x, const Tensor& y) {
  check_inputs(MulParams::kName, p.inputs(), {x, y});
  return aten_call(MulParams::kName, [&] { return from_aten(at::mul(to_aten(x), to_aten(y))); });
}

PARITY_ATEN_OP(MulParams, binary_op(mul_aten));

}  // namespace parity
