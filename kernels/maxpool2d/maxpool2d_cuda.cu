// maxpool2d on the device: one thread per output element, the reference's scan order and NaN
// rule (a NaN in the window wins and ends the scan; padding never wins).
#include "kernels/cuda_util.h"
#include "kernels/maxpool2d/maxpool2d.h"

namespace parity {

namespace {
struct Pool {
  int64_t h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw, total;
};

__global__ void maxpool2d_kernel(const float* __restrict__ x, float* __restrict__ out, Pool g) {
  for (int64_t o = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; o < g.total; o += int64_t(gridDim.x) * blockDim.x) {
    const int64_t ow = o % g.ow, rest = o / g.ow, oh = rest % g.oh, plane = rest / g.oh;
    const float* src = x + plane * g.h * g.w;
    float best = -INFINITY;
    for (int64_t kh = 0; kh < g.kh && !isnan(best); ++kh) {
      const int64_t ih = oh * g.sh - g.ph + kh * g.dh;
      if (ih < 0 || ih >= g.h) continue;
      for (int64_t kw = 0; kw < g.kw; ++kw) {
        const int64_t iw = ow * g.sw - g.pw + kw * g.dw;
        if (iw < 0 || iw >= g.w) continue;
        const float v = src[ih * g.w + iw];
        if (v > best || isnan(v)) best = v;
        if (isnan(best)) break;
      }
    }
    out[o] = best;
  }
}
}  // namespace

Tensor maxpool2d_cuda(const Maxpool2dParams& p, const Tensor& x) {
  check_inputs(Maxpool2dParams::kName, p.inputs(), {x});
  cuda::require_gpu(Maxpool2dParams::kName);
  const Shape os = p.output_shape();
  const Pool g{p.x[2], p.x[3], os[2], os[3], p.k_h, p.k_w, p.stride_h, p.stride_w, p.pad_h, p.pad_w, p.dil_h, p.dil_w, os.numel()};
  const cuda::DeviceBuffer dx = cuda::to_device(x);
  cuda::DeviceBuffer out = cuda::output_buffer(DType::Float32, os);
  if (g.total > 0) {
    cuda::kernel_begin();
    maxpool2d_kernel<<<cuda::blocks_for(g.total, 256), 256>>>(dx.as<float>(), out.as<float>(), g);
    cuda::check_launch("maxpool2d_kernel");
  }
  return cuda::to_host(out, DType::Float32, os, "cuda maxpool2d");
}

}  // namespace parity
