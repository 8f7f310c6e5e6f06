#include <ATen/ops/sigmoid.h>

#include "kernels/aten/util.h"
#include "kernels/sigmoid/sigmoid.h"

namespace parity {

Tensor sigmoid_aten(const SigmoidParams& p, const Tensor& x) {
  check_inputs(SigmoidParams::kName, p.inputs(), {x});
  return aten_call(SigmoidParams::kName, [&] { return from_aten(at::sigmoid(to_aten(x))); });
}

PARITY_ATEN_OP(SigmoidParams, unary_op(sigmoid_aten));

}  // namespace parity
