// threshold on the device: x > value with value rounded to float32 first, as the reference.
#include "kernels/cuda_util.h"
#include "kernels/threshold/threshold.h"

namespace parity {

namespace {
__global__ void threshold_kernel(const float* __restrict__ x, bool* __restrict__ out, float value, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) out[i] = x[i] > value;
}
}  // namespace

Tensor threshold_cuda(const ThresholdParams& p, const Tensor& x) {
  check_inputs(ThresholdParams::kName, p.inputs(), {x});
  cuda::require_gpu(ThresholdParams::kName);
  const cuda::DeviceBuffer dx = cuda::to_device(x);
  cuda::DeviceBuffer out(size_t(x.numel()));
  if (x.numel() > 0) {
    cuda::kernel_begin();
    threshold_kernel<<<cuda::blocks_for(x.numel(), 256), 256>>>(dx.as<float>(), out.as<bool>(), float(p.value), x.numel());
    cuda::check_launch("threshold_kernel");
  }
  return cuda::to_host(out, DType::Bool, p.x, "cuda threshold");
}

}  // namespace parity
