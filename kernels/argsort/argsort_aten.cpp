#include <ATen/ops/sort.h>

#include "kernels/aten/util.h"
#include "kernels/argsort/argsort.h"

namespace parity {

Tensor argsort_aten(const ArgsortParams& p, const Tensor& x) {
  check_inputs(ArgsortParams::kName, p.inputs(), {x});
  return aten_call(ArgsortParams::kName, [&] {
    return from_aten(std::get<1>(at::sort(to_aten(x), /*stable=*/true, /*dim=*/0, p.descending)));
  });
}

PARITY_ATEN_OP(ArgsortParams, unary_op(argsort_aten));

}  // namespace parity
