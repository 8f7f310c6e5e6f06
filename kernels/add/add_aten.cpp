#include <ATen/ops/add.h>

#include "kernels/add/add.h"
#include "kernels/aten/util.h"

namespace parity {

Tensor add_aten(const AddParams& p, const Tensor& x, const Tensor& y) {
  check_inputs(AddParams::kName, p.inputs(), {x, y});
  return aten_call(AddParams::kName, [&] { return from_aten(at::add(to_aten(x), to_aten(y))); });
}

PARITY_ATEN_OP(AddParams, binary_op(add_aten));

}  // namespace parity
