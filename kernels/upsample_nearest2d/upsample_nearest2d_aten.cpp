#include <ATen/ops/upsample_nearest2d.h>

#include "kernels/aten/util.h"
#include "kernels/upsample_nearest2d/upsample_nearest2d.h"

namespace parity {

Tensor upsample_nearest2d_aten(const UpsampleNearest2dParams& p, const Tensor& x) {
  check_inputs(UpsampleNearest2dParams::kName, p.inputs(), {x});
  const Shape os = p.output_shape();
  // The scale factors as torch.nn.Upsample(scale_factor=...) passes them.
  return aten_call(UpsampleNearest2dParams::kName, [&] {
    return from_aten(at::upsample_nearest2d(to_aten(x), {os[2], os[3]}, double(p.scale_h), double(p.scale_w)));
  });
}

PARITY_ATEN_OP(UpsampleNearest2dParams, unary_op(upsample_nearest2d_aten));

}  // namespace parity
