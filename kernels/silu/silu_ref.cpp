#include <cmath>

#include "kernels/ref_util.h"
#include "kernels/silu/silu.h"

namespace parity {

Tensor silu_ref(const SiluParams& p, const Tensor& x) {
  check_inputs(SiluParams::kName, p.inputs(), {x});
  // exp(-v) overflowing to inf for v << 0 gives -0.0, as torch does.
  return map_in_f64(x, [](double v) { return v / (1.0 + std::exp(-v)); });
}

}  // namespace parity
