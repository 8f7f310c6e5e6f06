#include <cmath>

#include "kernels/ref_util.h"
#include "kernels/sigmoid/sigmoid.h"

namespace parity {

Tensor sigmoid_ref(const SigmoidParams& p, const Tensor& x) {
  check_inputs(SigmoidParams::kName, p.inputs(), {x});
  return map_in_f64(x, [](double v) { return 1.0 / (1.0 + std::exp(-v)); });
}

}  // namespace parity
