// mul on the device: one multiplication in the dtype (correctly rounded, as the reference's);
// integers wrap around (cuda_elementwise.cuh's zip hands them over unsigned).
#include "kernels/cuda_elementwise.cuh"
#include "kernels/mul/mul.h"

namespace parity {

namespace {
struct Mul {
  template <typename A> __device__ A operator()(A a, A b) const { return A(a * b); }
};
}  // namespace

Tensor mul_cuda(const MulParams& p, const Tensor& x, const Tensor& y) {
  check_inputs(MulParams::kName, p.inputs(), {x, y});
  return cuda::zip(MulParams::kName, x, y, Mul{});
}

}  // namespace parity
