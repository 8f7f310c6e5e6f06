#include <ATen/ops/silu.h>

#include "kernels/aten_util.h"
#include "kernels/silu/silu.h"

namespace parity {

Tensor silu_aten(const SiluParams& p, const Tensor& x) {
  check_inputs(SiluParams::kName, p.inputs(), {x});
  return aten_call(SiluParams::kName, [&] { return from_aten(at::silu(to_aten(x))); });
}

}  // namespace parity
