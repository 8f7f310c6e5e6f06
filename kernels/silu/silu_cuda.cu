// silu on the device: x / (1 + exp(-x)) in float64, rounded once (cuda_elementwise.cuh).
#include "kernels/cuda_elementwise.cuh"
#include "kernels/silu/silu.h"

namespace parity {

namespace {
struct Silu {
  __device__ double operator()(double v) const { return v / (1.0 + exp(-v)); }
};
}  // namespace

Tensor silu_cuda(const SiluParams& p, const Tensor& x) {
  check_inputs(SiluParams::kName, p.inputs(), {x});
  return cuda::map_float(SiluParams::kName, x, Silu{});
}

}  // namespace parity
