// conv2d on the device as an implicit GEMM: per group, C[OCg x P] = W[OCg x K] * X~[K x P] with
// P = N*OH*OW output pixels and K = ICg*KH*KW, where X~ (im2col of x) is never materialised: each
// tile of it is gathered from x straight into shared memory, zero outside the padded image.
// 64x64 output tiles, K in steps of 16, 256 threads with a 4x4 register block each; float32
// accumulation with explicit fmaf (the build turns off implicit contraction, --fmad=false, so
// every other CUDA op rounds as the reference does); bias and, for conv2d_silu_cuda, SiLU fused
// into the epilogue. Every stride, padding, dilation and group count the reference accepts.
#include "kernels/conv2d/conv2d.h"
#include "kernels/cuda_util.h"

namespace parity {

namespace {
constexpr int kTileM = 64, kTileN = 64, kTileK = 16, kThreads = 256;

struct ConvGeometry {
  int64_t n, c, h, w;          // input
  int64_t oc, oh, ow;          // output
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  int64_t groups, c_per_group, oc_per_group, k;  // k = c_per_group * kh * kw
  int64_t pixels;                                // n * oh * ow
};

template <bool kSilu>
__global__ void __launch_bounds__(kThreads)
conv2d_kernel(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias, float* __restrict__ out,
              ConvGeometry g) {
  __shared__ __align__(16) float a_tile[kTileK][kTileM];  // weights, k-major so rows read as float4
  __shared__ __align__(16) float b_tile[kTileK][kTileN];  // gathered input pixels
  const int t = threadIdx.x, tx = t % 16, ty = t / 16;
  const int64_t group = blockIdx.z;
  const int64_t m0 = int64_t(blockIdx.y) * kTileM, p0 = int64_t(blockIdx.x) * kTileN;

  // This thread gathers column (t % 64) of each B tile: decode its pixel once.
  const int b_col = t % kTileN, b_row0 = t / kTileN;  // rows b_row0 + 4*i
  const int64_t p = p0 + b_col;
  const bool p_ok = p < g.pixels;
  int64_t ih0 = 0, iw0 = 0;
  const float* x_img = x;
  if (p_ok) {
    const int64_t ow = p % g.ow, rest = p / g.ow, oh = rest % g.oh, nb = rest / g.oh;
    ih0 = oh * g.sh - g.ph;
    iw0 = ow * g.sw - g.pw;
    x_img = x + (nb * g.c + group * g.c_per_group) * g.h * g.w;
  }
  // And elements (m = t/16 + 16*i, k = t % 16) of each A tile.
  const int a_k = t % kTileK, a_m0 = t / kTileK;
  const float* w_group = w + group * g.oc_per_group * g.k;
  const int64_t khw = g.kh * g.kw;

  float acc[4][4] = {};
  for (int64_t k0 = 0; k0 < g.k; k0 += kTileK) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int m = a_m0 + 16 * i;
      const int64_t gm = m0 + m, gk = k0 + a_k;
      a_tile[a_k][m] = (gm < g.oc_per_group && gk < g.k) ? w_group[gm * g.k + gk] : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int kr = b_row0 + 4 * i;
      const int64_t gk = k0 + kr;
      float v = 0.0f;
      if (p_ok && gk < g.k) {
        const int64_t c = gk / khw, r = gk - c * khw, kh = r / g.kw, kw = r - kh * g.kw;
        const int64_t ih = ih0 + kh * g.dh, iw = iw0 + kw * g.dw;
        if (ih >= 0 && ih < g.h && iw >= 0 && iw < g.w) v = x_img[(c * g.h + ih) * g.w + iw];
      }
      b_tile[kr][b_col] = v;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTileK; ++kk) {
      const float4 a = *reinterpret_cast<const float4*>(&a_tile[kk][ty * 4]);
      const float4 b = *reinterpret_cast<const float4*>(&b_tile[kk][tx * 4]);
      const float av[4] = {a.x, a.y, a.z, a.w}, bv[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
      }
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int64_t m = m0 + ty * 4 + i;
    if (m >= g.oc_per_group) continue;
    const int64_t oc = group * g.oc_per_group + m;
    const float b = bias ? bias[oc] : 0.0f;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int64_t pj = p0 + tx * 4 + j;
      if (pj >= g.pixels) continue;
      float v = acc[i][j] + b;
      if (kSilu) v = float(double(v) / (1.0 + exp(-double(v))));  // as silu_cuda: float64, rounded once
      const int64_t ow = pj % g.ow, rest = pj / g.ow, oh = rest % g.oh, nb = rest / g.oh;
      out[((nb * g.oc + oc) * g.oh + oh) * g.ow + ow] = v;
    }
  }
}

Tensor run(const Conv2dParams& p, const Tensor& x, const Tensor& w, const Tensor* bias, bool silu) {
  check_conv2d_inputs(p, x, w, bias);
  cuda::require_gpu(Conv2dParams::kName);
  const Shape os = p.output_shape();
  ConvGeometry g{};
  g.n = p.x[0], g.c = p.x[1], g.h = p.x[2], g.w = p.x[3];
  g.oc = os[1], g.oh = os[2], g.ow = os[3];
  g.kh = p.w[2], g.kw = p.w[3], g.sh = p.stride_h, g.sw = p.stride_w, g.ph = p.pad_h, g.pw = p.pad_w;
  g.dh = p.dil_h, g.dw = p.dil_w, g.groups = p.groups;
  g.c_per_group = g.c / g.groups, g.oc_per_group = g.oc / g.groups, g.k = p.reduction_length();
  g.pixels = g.n * g.oh * g.ow;
  const cuda::DeviceBuffer dx = cuda::to_device(x), dw = cuda::to_device(w);
  const cuda::DeviceBuffer db = bias ? cuda::to_device(*bias) : cuda::DeviceBuffer();
  cuda::DeviceBuffer dout = cuda::output_buffer(DType::Float32, os);
  if (os.numel() > 0) {
    const int64_t tiles_p = (g.pixels + kTileN - 1) / kTileN, tiles_m = (g.oc_per_group + kTileM - 1) / kTileM;
    if (tiles_p > INT32_MAX || tiles_m > 65535 || g.groups > 65535) throw Error("cuda conv2d: output too large for one launch");
    const dim3 grid(unsigned(tiles_p), unsigned(tiles_m), unsigned(g.groups));
    const float* b = bias ? db.as<float>() : nullptr;
    if (silu) {
      conv2d_kernel<true><<<grid, kThreads>>>(dx.as<float>(), dw.as<float>(), b, dout.as<float>(), g);
    } else {
      conv2d_kernel<false><<<grid, kThreads>>>(dx.as<float>(), dw.as<float>(), b, dout.as<float>(), g);
    }
    cuda::check_launch(silu ? "conv2d_kernel<silu>" : "conv2d_kernel");
  }
  return cuda::to_host(dout, DType::Float32, os, silu ? "cuda conv2d+silu" : "cuda conv2d");
}
}  // namespace

Tensor conv2d_cuda(const Conv2dParams& p, const Tensor& x, const Tensor& w, const Tensor* bias) { return run(p, x, w, bias, false); }

Tensor conv2d_silu_cuda(const Conv2dParams& p, const Tensor& x, const Tensor& w, const Tensor* bias) {
  return run(p, x, w, bias, true);
}

}  // namespace parity
