#include <ATen/ops/gt.h>

#include "kernels/aten/util.h"
#include "kernels/threshold/threshold.h"

namespace parity {

Tensor threshold_aten(const ThresholdParams& p, const Tensor& x) {
  check_inputs(ThresholdParams::kName, p.inputs(), {x});
  return aten_call(ThresholdParams::kName, [&] { return from_aten(at::gt(to_aten(x), p.value)); });
}

PARITY_ATEN_OP(ThresholdParams, unary_op(threshold_aten));

}  // namespace parity
