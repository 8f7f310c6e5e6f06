#include <ATen/ops/nonzero.h>

#include "kernels/aten/util.h"
#include "kernels/nonzero/nonzero.h"

namespace parity {

Tensor nonzero_aten(const NonzeroParams& p, const Tensor& x) {
  check_inputs(NonzeroParams::kName, p.inputs(), {x});
  return aten_call(NonzeroParams::kName, [&] { return from_aten(at::nonzero(to_aten(x))); });
}

PARITY_ATEN_OP(NonzeroParams, unary_op(nonzero_aten));

}  // namespace parity
