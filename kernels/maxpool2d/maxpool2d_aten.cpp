#include <ATen/ops/max_pool2d.h>

#include "kernels/aten/util.h"
#include "kernels/maxpool2d/maxpool2d.h"

namespace parity {

Tensor maxpool2d_aten(const Maxpool2dParams& p, const Tensor& x) {
  check_inputs(Maxpool2dParams::kName, p.inputs(), {x});
  return aten_call(Maxpool2dParams::kName, [&] {
    return from_aten(at::max_pool2d(to_aten(x), {p.k_h, p.k_w}, {p.stride_h, p.stride_w}, {p.pad_h, p.pad_w},
                                    {p.dil_h, p.dil_w}, p.ceil));
  });
}

PARITY_ATEN_OP(Maxpool2dParams, unary_op(maxpool2d_aten));

}  // namespace parity
