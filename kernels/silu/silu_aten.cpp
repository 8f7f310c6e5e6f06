#include <ATen/ops/silu.h>

#include "kernels/aten/util.h"
#include "kernels/silu/silu.h"

namespace parity {

Tensor silu_aten(const SiluParams& p, const Tensor& x) {
  check_inputs(SiluParams::kName, p.inputs(), {x});
  return aten_call(SiluParams::kName, [&] { return from_aten(at::silu(to_aten(x))); });
}

PARITY_ATEN_OP(SiluParams, unary_op(silu_aten));

// Golden data (AtenPlugin::float64): float32 silu in float64, rounded once; none for a float64
// silu, which is its own golden.
PARITY_ATEN_FLOAT64(SiluParams, bind_op<SiluParams>([](const SiluParams& p, const std::vector<Tensor>& in) {
  if (p.dtype != DType::Float32) return std::vector<Tensor>{};
  return std::vector<Tensor>{from_aten_float32(at::silu(to_aten_float64(in[0])))};
}));

}  // namespace parity
