// upsample_nearest2d on the device: one thread per output element, out[y][x] = in[y/sh][x/sw].
#include "kernels/cuda_util.h"
#include "kernels/upsample_nearest2d/upsample_nearest2d.h"

namespace parity {

namespace {
__global__ void upsample_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t h, int64_t w, int64_t sh, int64_t sw,
                                int64_t total) {
  const int64_t ow = w * sw, oh = h * sh;
  for (int64_t o = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; o < total; o += int64_t(gridDim.x) * blockDim.x) {
    const int64_t ox = o % ow, rest = o / ow, oy = rest % oh, plane = rest / oh;
    out[o] = x[(plane * h + oy / sh) * w + ox / sw];
  }
}
}  // namespace

Tensor upsample_nearest2d_cuda(const UpsampleNearest2dParams& p, const Tensor& x) {
  check_inputs(UpsampleNearest2dParams::kName, p.inputs(), {x});
  cuda::require_gpu(UpsampleNearest2dParams::kName);
  const Shape os = p.output_shape();
  const cuda::DeviceBuffer dx = cuda::to_device(x);
  cuda::DeviceBuffer out = cuda::output_buffer(DType::Float32, os);
  if (os.numel() > 0) {
    cuda::kernel_begin();
    upsample_kernel<<<cuda::blocks_for(os.numel(), 256), 256>>>(dx.as<float>(), out.as<float>(), p.x[2], p.x[3], p.scale_h, p.scale_w,
                                                                os.numel());
    cuda::check_launch("upsample_kernel");
  }
  return cuda::to_host(out, DType::Float32, os, "cuda upsample_nearest2d");
}

}  // namespace parity
