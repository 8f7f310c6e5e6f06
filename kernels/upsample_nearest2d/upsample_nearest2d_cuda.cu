// upsample_nearest2d on the device: one thread per input element, which writes its sh x sw block
// of the output (out[y][x] = in[y/sh][x/sw]): one read, and for YOLOv5's scale 2 two 8-byte
// stores; index arithmetic in 32 bits where the tensor allows (integer division is the cost). A
// half call moves its type's 16-bit elements.
#include <cstdint>

#include "kernels/cuda_half.cuh"
#include "kernels/cuda_util.h"
#include "kernels/upsample_nearest2d/upsample_nearest2d.h"

namespace parity {

namespace {
template <typename T, typename I, bool kScale2>
__global__ void upsample_kernel(const T* __restrict__ x, T* __restrict__ out, I h, I w, I sh, I sw, I total_in) {
  const I ow = w * sw;
  for (I i = I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x); i < total_in; i += I(gridDim.x) * I(blockDim.x)) {
    const I ix = i % w, row = i / w;  // row = plane * h + iy
    const T v = x[i];
    T* dst = out + row * sh * ow + ix * sw;
    if constexpr (kScale2 && sizeof(T) == 4) {  // ow is even and so is ix * 2: 8-byte aligned
      reinterpret_cast<float2*>(dst)[0] = make_float2(v, v);
      reinterpret_cast<float2*>(dst + ow)[0] = make_float2(v, v);
    } else if constexpr (kScale2) {
      dst[0] = v, dst[1] = v, dst[ow] = v, dst[ow + 1] = v;
    } else {
      for (I dy = 0; dy < sh; ++dy) {
        for (I dx = 0; dx < sw; ++dx) dst[dy * ow + dx] = v;
      }
    }
  }
}

template <typename T, typename I>
void launch(const UpsampleNearest2dParams& p, const T* x, T* out) {
  const I total_in = I(p.x.numel());
  const unsigned blocks = cuda::blocks_for(total_in, 256);
  const auto args = [&](auto kernel) {
    kernel<<<blocks, 256>>>(x, out, I(p.x[2]), I(p.x[3]), I(p.scale_h), I(p.scale_w), total_in);
  };
  if (p.scale_h == 2 && p.scale_w == 2) {
    args(upsample_kernel<T, I, true>);
  } else {
    args(upsample_kernel<T, I, false>);
  }
}
}  // namespace

Tensor upsample_nearest2d_cuda(const UpsampleNearest2dParams& p, const Tensor& x) {
  check_inputs(UpsampleNearest2dParams::kName, p.inputs(), {x});
  cuda::require_gpu(UpsampleNearest2dParams::kName);
  const Shape os = p.output_shape();
  const cuda::DeviceBuffer dx = cuda::upload(x);
  cuda::DeviceBuffer out = cuda::float_output(os);
  if (os.numel() > 0) {
    cuda::kernel_begin();
    cuda::with_storage(half_in_scope(), [&](auto tag) {
      using T = decltype(tag);
      if (os.numel() < INT32_MAX) {
        launch<T, int32_t>(p, dx.as<T>(), out.as<T>());
      } else {
        launch<T, int64_t>(p, dx.as<T>(), out.as<T>());
      }
    });
    cuda::check_launch("upsample_kernel");
  }
  return cuda::download_float(out, os, "cuda upsample_nearest2d");
}

}  // namespace parity
