// sigmoid on the device: 1 / (1 + exp(-x)) in float64, rounded once (cuda_elementwise.cuh).
#include "kernels/cuda_elementwise.cuh"
#include "kernels/sigmoid/sigmoid.h"

namespace parity {

namespace {
struct Sigmoid {
  __device__ double operator()(double v) const { return 1.0 / (1.0 + exp(-v)); }
};
}  // namespace

Tensor sigmoid_cuda(const SigmoidParams& p, const Tensor& x) {
  check_inputs(SigmoidParams::kName, p.inputs(), {x});
  return cuda::map_float(SigmoidParams::kName, x, Sigmoid{});
}

}  // namespace parity
