// maxpool2d on the device: one thread per output element, the reference's scan order and NaN
// rule (a NaN in the window wins and ends the scan; padding never wins). Index arithmetic in 32
// bits where the input and output allow: 64-bit division dominated the kernel. A half call
// compares its type's values widened to float32 (exact) and stores the winning element as it is.
#include <cstdint>

#include "kernels/cuda_half.cuh"
#include "kernels/cuda_util.h"
#include "kernels/maxpool2d/maxpool2d.h"

namespace parity {

namespace {
template <typename I> struct Pool {
  I h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw, total;
};

template <typename T, typename I> __global__ void maxpool2d_kernel(const T* __restrict__ x, T* __restrict__ out, Pool<I> g) {
  for (I o = I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x); o < g.total; o += I(gridDim.x) * I(blockDim.x)) {
    const I ow = o % g.ow, rest = o / g.ow, oh = rest % g.oh, plane = rest / g.oh;
    const T* src = x + plane * g.h * g.w;
    float best = -INFINITY;
    T winner = cuda::narrow_float<T>(-INFINITY);  // the element itself: a NaN keeps its bits
    for (I kh = 0; kh < g.kh && !isnan(best); ++kh) {
      const I ih = oh * g.sh - g.ph + kh * g.dh;
      if (ih < 0 || ih >= g.h) continue;
      for (I kw = 0; kw < g.kw; ++kw) {
        const I iw = ow * g.sw - g.pw + kw * g.dw;
        if (iw < 0 || iw >= g.w) continue;
        const T e = src[ih * g.w + iw];
        const float v = cuda::widen(e);
        if (v > best || isnan(v)) best = v, winner = e;
        if (isnan(best)) break;
      }
    }
    out[o] = winner;
  }
}
}  // namespace

Tensor maxpool2d_cuda(const Maxpool2dParams& p, const Tensor& x) {
  check_inputs(Maxpool2dParams::kName, p.inputs(), {x});
  cuda::require_gpu(Maxpool2dParams::kName);
  const Shape os = p.output_shape();
  auto geometry = [&](auto index) {
    using I = decltype(index);
    return Pool<I>{I(p.x[2]), I(p.x[3]), I(os[2]), I(os[3]), I(p.k_h), I(p.k_w), I(p.stride_h), I(p.stride_w),
                   I(p.pad_h), I(p.pad_w), I(p.dil_h), I(p.dil_w), I(os.numel())};
  };
  const cuda::DeviceBuffer dx = cuda::upload(x);
  cuda::DeviceBuffer out = cuda::float_output(os);
  if (os.numel() > 0) {
    const unsigned blocks = cuda::blocks_for(os.numel(), 256);
    cuda::kernel_begin();
    cuda::with_storage(half_in_scope(), [&](auto tag) {
      using T = decltype(tag);
      // Every index below (output position, input row and column with padding) fits 32 bits when
      // both tensors have fewer than 2^30 elements.
      if (os.numel() < (int64_t(1) << 30) && x.numel() < (int64_t(1) << 30)) {
        maxpool2d_kernel<<<blocks, 256>>>(dx.as<T>(), out.as<T>(), geometry(int32_t{}));
      } else {
        maxpool2d_kernel<<<blocks, 256>>>(dx.as<T>(), out.as<T>(), geometry(int64_t{}));
      }
    });
    cuda::check_launch("maxpool2d_kernel");
  }
  return cuda::download_float(out, os, "cuda maxpool2d");
}

}  // namespace parity
