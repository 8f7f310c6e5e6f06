// threshold on the device: x > value with value rounded to float32 first, as the reference (to a
// half call's type: its traits round it; x is read in that type).
#include "kernels/cuda_half.cuh"
#include "kernels/cuda_util.h"
#include "kernels/threshold/threshold.h"

namespace parity {

namespace {
template <typename T> __global__ void threshold_kernel(const T* __restrict__ x, bool* __restrict__ out, float value, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    out[i] = cuda::widen(x[i]) > value;
  }
}
}  // namespace

Tensor threshold_cuda(const ThresholdParams& p, const Tensor& x) {
  check_inputs(ThresholdParams::kName, p.inputs(), {x});
  cuda::require_gpu(ThresholdParams::kName);
  const cuda::DeviceBuffer dx = cuda::upload(x);
  cuda::DeviceBuffer out(size_t(x.numel()));
  if (x.numel() > 0) {
    cuda::kernel_begin();
    cuda::with_storage(half_in_scope(), [&](auto tag) {
      using T = decltype(tag);
      threshold_kernel<<<cuda::blocks_for(x.numel(), 256), 256>>>(dx.as<T>(), out.as<bool>(), float(p.value), x.numel());
    });
    cuda::check_launch("threshold_kernel");
  }
  return cuda::to_host(out, DType::Bool, p.x, "cuda threshold");
}

}  // namespace parity
