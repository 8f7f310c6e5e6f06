// conv2d on the device as an implicit GEMM: per group, C[OCg x P] = W[OCg x K] * X~[K x P] with
// P = N*OH*OW output pixels and K = ICg*KH*KW, where X~ (im2col of x) is never materialised: each
// tile of it is gathered from x straight into shared memory, zero outside the padded image.
//
// A block computes a BM x 128 output tile (BM = 128, or 64 when a group has at most 64 output
// channels) in K steps of 8; 256 threads, each a (BM/16) x 8 register block split in two 4-wide
// column halves 64 apart (and, for BM = 128, two 4-high row halves), so every shared-memory read
// is a conflict-free float4. Tiles are double-buffered: the next tile's global loads are in
// registers while the current one is multiplied, one barrier per step. The A tile is stored
// k-major with rows padded by 4 floats, which makes its transposing store free of bank conflicts.
// Each thread decodes its gathered pixel once; each k's (channel, kh, kw) comes decoded from a
// table made on the host (one 16-byte load, shared by the threads of a row), so the K loop
// divides nothing.
//
// Where the output tiles alone would leave SMs idle (deep layers at small batch), K is split:
// each slice writes a partial sum to a workspace and a second kernel adds the slices in a fixed
// order, then the bias: deterministic, unlike atomics. Accumulation is float32 with explicit fmaf
// (the build turns implicit contraction off, --fmad=false, so every other CUDA op rounds as the
// reference does). Every stride, padding, dilation and group count the reference accepts.
//
// A half call (precision=fp16|bf16) runs the same implicit GEMM on tensor cores (WMMA 16x16x16,
// half inputs, float32 accumulation, as cuDNN's half convolutions): 128 x 128 output tiles (64
// rows for groups of at most 64 output channels) in K steps of 32, 8 warps of 2 x 4, each warp
// (BM/2) x 32 of the tile. The weights are packed on the host with each row padded to whole K
// steps of zeros, so A tiles load 16 bytes at a time with no bound on k. Each output is rounded
// once to the type, after the bias is added in float32; split K adds float32 partial sums.
#include <mma.h>

#include <algorithm>
#include <climits>
#include <vector>

#include "kernels/conv2d/conv2d.h"
#include "kernels/cuda_half.cuh"
#include "kernels/cuda_util.h"

namespace parity {

namespace {
constexpr int kBN = 128, kBK = 8, kThreads = 256, kPad = 4;

struct ConvGeometry {
  int c, h, w;                           // input channels, height, width
  int oc, ohw, ow;                       // output channels, pixels per image, width
  int kh, kw, sh, sw, ph, pw, dh, dw;
  int c_per_group, oc_per_group, k;      // k = c_per_group * kh * kw
  int64_t pixels;                        // n * oh * ow
  int splits, k_per_split;               // K slices (1: no split), each a multiple of kBK long
};

// Row k of the im2col matrix: where its element sits in a pixel's receptive field.
struct alignas(16) KEntry {
  int offset;  // c * H * W + kh * dil_h * W + kw * dil_w, from the field's top-left corner
  int dy, dx;  // kh * dil_h, kw * dil_w: for the padding test
  int unused;  // pads the entry to one 16-byte load
};

// The (row, column) of a thread's register block element: rows ty*4 + i (+64 for i >= 4),
// columns tx*4 + j (+64 for j >= 4).
__device__ __forceinline__ int block_offset(int lane16, int i) { return (i < 4 ? 0 : 64) + lane16 * 4 + (i & 3); }

template <int kBM, bool kSplit>
__global__ void __launch_bounds__(kThreads, 2)
conv2d_kernel(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias, const KEntry* __restrict__ ktab,
              float* __restrict__ out, ConvGeometry g) {
  constexpr int kTM = kBM / 16;                    // rows per thread: 4 or 8
  constexpr int kAPer = kBM * kBK / kThreads;      // A elements each thread loads per step: 2 or 4
  __shared__ __align__(16) float a_tile[2][kBK][kBM + kPad];
  __shared__ __align__(16) float b_tile[2][kBK][kBN + kPad];
  const int t = threadIdx.x, tx = t % 16, ty = t / 16;
  const int split = int(blockIdx.z) % g.splits, group = int(blockIdx.z) / g.splits;
  const int m0 = int(blockIdx.y) * kBM;
  const int64_t p0 = int64_t(blockIdx.x) * kBN;
  const int k_begin = split * g.k_per_split, k_end = min(g.k, k_begin + g.k_per_split);

  // A: this thread loads kAPer consecutive k of one weight row.
  const int a_m = t / (kBK / kAPer), a_k = (t % (kBK / kAPer)) * kAPer;
  const bool a_ok = m0 + a_m < g.oc_per_group;
  const float* a_row = w + (int64_t(group) * g.oc_per_group + (a_ok ? m0 + a_m : 0)) * g.k;

  // B: this thread gathers column b_n (one output pixel) at rows b_r + 2i of each tile.
  const int b_n = t % kBN, b_r = t / kBN;
  const int64_t p = p0 + b_n;
  const bool p_ok = p < g.pixels;
  int ih0 = 0, iw0 = 0;
  const float* x_img = x;
  if (p_ok) {
    const int64_t nb = p / g.ohw;
    const int r = int(p - nb * g.ohw), oh = r / g.ow, ow = r - oh * g.ow;
    ih0 = oh * g.sh - g.ph;
    iw0 = ow * g.sw - g.pw;
    x_img = x + (nb * g.c + int64_t(group) * g.c_per_group) * g.h * g.w;
  }
  const int corner = ih0 * g.w + iw0;  // may be negative: only in-image elements are read

  float a_next[kAPer], b_next[4];
  auto load = [&](int k0) {
#pragma unroll
    for (int i = 0; i < kAPer; ++i) {
      const int k = k0 + a_k + i;
      a_next[i] = (a_ok && k < k_end) ? a_row[k] : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int k = k0 + b_r + 2 * i;
      float v = 0.0f;
      if (p_ok && k < k_end) {
        const int4 e = *reinterpret_cast<const int4*>(&ktab[k]);
        if (unsigned(ih0 + e.y) < unsigned(g.h) && unsigned(iw0 + e.z) < unsigned(g.w)) v = x_img[corner + e.x];
      }
      b_next[i] = v;
    }
  };
  auto store = [&](int buf) {
#pragma unroll
    for (int i = 0; i < kAPer; ++i) a_tile[buf][a_k + i][a_m] = a_next[i];
#pragma unroll
    for (int i = 0; i < 4; ++i) b_tile[buf][b_r + 2 * i][b_n] = b_next[i];
  };

  float acc[kTM][8] = {};
  const int steps = (k_end - k_begin + kBK - 1) / kBK;
  load(k_begin);
  store(0);
  __syncthreads();
  for (int s = 0; s < steps; ++s) {
    const int cur = s & 1;
    if (s + 1 < steps) load(k_begin + (s + 1) * kBK);
#pragma unroll
    for (int kk = 0; kk < kBK; ++kk) {
      float a[kTM], b[8];
#pragma unroll
      for (int h = 0; h < kTM / 4; ++h) {
        const float4 v = *reinterpret_cast<const float4*>(&a_tile[cur][kk][h * 64 + ty * 4]);
        a[h * 4] = v.x, a[h * 4 + 1] = v.y, a[h * 4 + 2] = v.z, a[h * 4 + 3] = v.w;
      }
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float4 v = *reinterpret_cast<const float4*>(&b_tile[cur][kk][h * 64 + tx * 4]);
        b[h * 4] = v.x, b[h * 4 + 1] = v.y, b[h * 4 + 2] = v.z, b[h * 4 + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < kTM; ++i) {
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
      }
    }
    if (s + 1 < steps) store(cur ^ 1);
    __syncthreads();
  }

  // Epilogue: NCHW output with the bias, or (split K) this slice's partial sums, [slice][oc][pixel].
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const int64_t pj = p0 + block_offset(tx, j);
    if (pj >= g.pixels) continue;
    const int64_t nb = pj / g.ohw, r = pj - nb * g.ohw;
#pragma unroll
    for (int i = 0; i < kTM; ++i) {
      const int m = m0 + block_offset(ty, i);
      if (m >= g.oc_per_group) continue;
      const int oc = group * g.oc_per_group + m;
      if (kSplit) {
        out[(int64_t(split) * g.oc + oc) * g.pixels + pj] = acc[i][j];
      } else {
        out[(nb * g.oc + oc) * g.ohw + r] = acc[i][j] + (bias ? bias[oc] : 0.0f);
      }
    }
  }
}

// Adds the K slices of each output element in slice order, then the bias, into NCHW of T
// (float, or a half call's type: rounded once).
template <typename T>
__global__ void split_sum_kernel(const float* __restrict__ partial, const T* __restrict__ bias, T* __restrict__ out, ConvGeometry g) {
  const int64_t total = int64_t(g.oc) * g.pixels;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
    float sum = 0.0f;
    for (int s = 0; s < g.splits; ++s) sum += partial[s * total + e];
    const int64_t oc = e / g.pixels, pj = e - oc * g.pixels, nb = pj / g.ohw, r = pj - nb * g.ohw;
    out[(nb * g.oc + oc) * g.ohw + r] = cuda::narrow_float<T>(sum + (bias ? cuda::widen(bias[oc]) : 0.0f));
  }
}

// ---- Half precision on tensor cores ----
constexpr int kHBN = 128, kHBK = 32, kHPad = 8;  // kHPad halves: rows stay 16-byte multiples, banks shift

// T: __half or __nv_bfloat16. w is [groups * oc_per_group][k_row], each row zero-padded to k_row
// (a multiple of kHBK); out is T NCHW, or (kSplit) float partial sums [slice][oc][pixel].
template <typename T, int kBM, bool kSplit>
__global__ void __launch_bounds__(kThreads, 2)
conv2d_half_kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias, const KEntry* __restrict__ ktab,
                   T* __restrict__ out, float* __restrict__ partial, ConvGeometry g, int k_row) {
  using namespace nvcuda;
  constexpr int kFM = kBM / 32;                 // 16-row fragments per warp: 4 or 2
  constexpr int kAPer = kBM * kHBK / kThreads;  // A halves each thread loads per step: 16 or 8
  constexpr int kLdA = kHBK + kHPad, kLdB = kHBN + kHPad;
  __shared__ __align__(32) T a_tile[2][kBM][kLdA];
  __shared__ __align__(32) T b_tile[2][kHBK][kLdB];
  const int t = threadIdx.x, warp = t / 32, lane = t % 32, wm = warp / 4, wn = warp % 4;
  const int split = int(blockIdx.z) % g.splits, group = int(blockIdx.z) / g.splits;
  const int m0 = int(blockIdx.y) * kBM;
  const int64_t p0 = int64_t(blockIdx.x) * kHBN;
  const int k_begin = split * g.k_per_split, k_end = min(g.k, k_begin + g.k_per_split);

  // A: this thread loads kAPer consecutive k of one packed weight row, 16 bytes at a time.
  const int a_m = t / (kHBK / kAPer), a_k = (t % (kHBK / kAPer)) * kAPer;
  const bool a_ok = m0 + a_m < g.oc_per_group;
  const T* a_row = w + (int64_t(group) * g.oc_per_group + (a_ok ? m0 + a_m : 0)) * k_row;

  // B: this thread gathers column b_n (one output pixel) at rows b_r + 2i of each tile.
  const int b_n = t % kHBN, b_r = t / kHBN;
  const int64_t p = p0 + b_n;
  const bool p_ok = p < g.pixels;
  int ih0 = 0, iw0 = 0;
  const T* x_img = x;
  if (p_ok) {
    const int64_t nb = p / g.ohw;
    const int r = int(p - nb * g.ohw), oh = r / g.ow, ow = r - oh * g.ow;
    ih0 = oh * g.sh - g.ph;
    iw0 = ow * g.sw - g.pw;
    x_img = x + (nb * g.c + int64_t(group) * g.c_per_group) * g.h * g.w;
  }
  const int corner = ih0 * g.w + iw0;

  uint4 a_next[kAPer / 8];
  T b_next[kHBK / 2];
  const T zero = cuda::narrow_float<T>(0.0f);
  auto load = [&](int k0) {
#pragma unroll
    for (int i = 0; i < kAPer / 8; ++i) a_next[i] = a_ok ? *reinterpret_cast<const uint4*>(a_row + k0 + a_k + 8 * i) : make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int i = 0; i < kHBK / 2; ++i) {
      const int k = k0 + b_r + 2 * i;
      T v = zero;
      if (p_ok && k < k_end) {
        const int4 e = *reinterpret_cast<const int4*>(&ktab[k]);
        if (unsigned(ih0 + e.y) < unsigned(g.h) && unsigned(iw0 + e.z) < unsigned(g.w)) v = x_img[corner + e.x];
      }
      b_next[i] = v;
    }
  };
  auto store = [&](int buf) {
#pragma unroll
    for (int i = 0; i < kAPer / 8; ++i) *reinterpret_cast<uint4*>(&a_tile[buf][a_m][a_k + 8 * i]) = a_next[i];
#pragma unroll
    for (int i = 0; i < kHBK / 2; ++i) b_tile[buf][b_r + 2 * i][b_n] = b_next[i];
  };

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[kFM][2];
#pragma unroll
  for (int i = 0; i < kFM; ++i) {
#pragma unroll
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
  }
  const int steps = (k_end - k_begin + kHBK - 1) / kHBK;
  if (steps > 0) {  // none where there is no input channel: the packed weights are empty
    load(k_begin);
    store(0);
  }
  __syncthreads();
  for (int s = 0; s < steps; ++s) {
    const int cur = s & 1;
    if (s + 1 < steps) load(k_begin + (s + 1) * kHBK);
#pragma unroll
    for (int kk = 0; kk < kHBK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a[kFM];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> b[2];
#pragma unroll
      for (int i = 0; i < kFM; ++i) wmma::load_matrix_sync(a[i], &a_tile[cur][wm * (kBM / 2) + i * 16][kk], kLdA);
#pragma unroll
      for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(b[j], &b_tile[cur][kk][wn * 32 + j * 16], kLdB);
#pragma unroll
      for (int i = 0; i < kFM; ++i) {
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
      }
    }
    if (s + 1 < steps) store(cur ^ 1);
    __syncthreads();
  }

  // Epilogue: each warp stages one 16 x 16 fragment at a time in shared memory (the A tiles are
  // free now), then writes it out: NCHW of T with the bias, or this slice's float partial sums.
  float* stage = reinterpret_cast<float*>(&a_tile[0][0][0]) + warp * 256;
#pragma unroll
  for (int i = 0; i < kFM; ++i) {
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      wmma::store_matrix_sync(stage, acc[i][j], 16, wmma::mem_row_major);
      __syncwarp();
      for (int e = lane; e < 256; e += 32) {
        const int m = m0 + wm * (kBM / 2) + i * 16 + e / 16;
        const int64_t pj = p0 + wn * 32 + j * 16 + e % 16;
        if (m >= g.oc_per_group || pj >= g.pixels) continue;
        const int oc = group * g.oc_per_group + m;
        if (kSplit) {
          partial[(int64_t(split) * g.oc + oc) * g.pixels + pj] = stage[e];
        } else {
          const int64_t nb = pj / g.ohw, r = pj - nb * g.ohw;
          out[(nb * g.oc + oc) * g.ohw + r] = cuda::narrow_float<T>(stage[e] + (bias ? cuda::widen(bias[oc]) : 0.0f));
        }
      }
      __syncwarp();
    }
  }
}

int multiprocessors() {
  static const int count = [] {
    int device = 0, n = 0;
    PARITY_CUDA_CHECK(cudaGetDevice(&device));
    PARITY_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device));
    return n;
  }();
  return count;
}

template <int kBM>
void launch(const ConvGeometry& g, int groups, const float* x, const float* w, const float* bias, const KEntry* ktab, float* out,
            float* partial) {
  const int64_t tiles_p = (g.pixels + kBN - 1) / kBN, tiles_m = (g.oc_per_group + kBM - 1) / kBM;
  if (tiles_p > INT32_MAX || tiles_m > 65535 || int64_t(groups) * g.splits > 65535) throw Error("cuda conv2d: output too large for one launch");
  const dim3 grid(unsigned(tiles_p), unsigned(tiles_m), unsigned(groups * g.splits));
  cuda::kernel_begin();
  if (g.splits > 1) {
    conv2d_kernel<kBM, true><<<grid, kThreads>>>(x, w, nullptr, ktab, partial, g);
    cuda::check_launch("conv2d_kernel (split K)");
    cuda::kernel_begin();
    split_sum_kernel<float><<<cuda::blocks_for(int64_t(g.oc) * g.pixels, 256), 256>>>(partial, bias, out, g);
    cuda::check_launch("split_sum_kernel (conv2d)");
  } else {
    conv2d_kernel<kBM, false><<<grid, kThreads>>>(x, w, bias, ktab, out, g);
    cuda::check_launch("conv2d_kernel");
  }
}

// Splits K while the output tiles (bm x bn) would fill fewer than twice the SMs (two blocks fit
// on each), keeping every slice at least `min_steps` K steps of `step` long.
void split_k(ConvGeometry& g, int groups, int bm, int bn, int step, int min_steps) {
  if (g.k == 0) {  // no input channel: one slice of no step, the bias alone
    g.splits = 1, g.k_per_split = step;
    return;
  }
  const int64_t blocks = ((g.pixels + bn - 1) / bn) * ((g.oc_per_group + bm - 1) / bm) * groups;
  const int k_steps = (g.k + step - 1) / step;
  int64_t splits = 1;
  if (g.pixels > 0 && g.oc > 0 && blocks < 2 * multiprocessors()) {
    splits = std::min<int64_t>({(2 * multiprocessors() + blocks - 1) / blocks, k_steps / min_steps, 32});
    splits = std::max<int64_t>(splits, 1);
  }
  g.k_per_split = int((k_steps + splits - 1) / splits) * step;
  g.splits = (g.k + g.k_per_split - 1) / g.k_per_split;  // no empty slice
}

template <typename T, int kBM>
void launch_half(const ConvGeometry& g, int groups, int k_row, const T* x, const T* w, const T* bias, const KEntry* ktab, T* out,
                 float* partial) {
  const int64_t tiles_p = (g.pixels + kHBN - 1) / kHBN, tiles_m = (g.oc_per_group + kBM - 1) / kBM;
  if (tiles_p > INT32_MAX || tiles_m > 65535 || int64_t(groups) * g.splits > 65535) throw Error("cuda conv2d: output too large for one launch");
  const dim3 grid(unsigned(tiles_p), unsigned(tiles_m), unsigned(groups * g.splits));
  cuda::kernel_begin();
  if (g.splits > 1) {
    conv2d_half_kernel<T, kBM, true><<<grid, kThreads>>>(x, w, nullptr, ktab, nullptr, partial, g, k_row);
    cuda::check_launch("conv2d_half_kernel (split K)");
    cuda::kernel_begin();
    split_sum_kernel<T><<<cuda::blocks_for(int64_t(g.oc) * g.pixels, 256), 256>>>(partial, bias, out, g);
    cuda::check_launch("split_sum_kernel (conv2d, half)");
  } else {
    conv2d_half_kernel<T, kBM, false><<<grid, kThreads>>>(x, w, bias, ktab, out, nullptr, g, k_row);
    cuda::check_launch("conv2d_half_kernel");
  }
}

// A half call: the weights packed with rows padded to whole K steps, every tensor in type h.
Tensor conv2d_half(ConvGeometry g, int groups, const std::vector<KEntry>& ktab, const Tensor& x, const Tensor& w, const Tensor* bias,
                   const Shape& os, HalfType h) {
  const int bm = g.oc_per_group <= 64 ? 64 : 128;
  split_k(g, groups, bm, kHBN, kHBK, 4);
  const int k_row = (g.k + kHBK - 1) / kHBK * kHBK;
  Tensor packed(DType::Float32, Shape{int64_t(g.oc), int64_t(k_row)});  // zero-filled: the padding
  for (int64_t r = 0; r < g.oc; ++r) {
    std::copy_n(w.data<float>() + r * g.k, g.k, packed.mutable_data<float>() + r * k_row);
  }
  const cuda::DeviceBuffer dx = cuda::to_device_half(x, h), dw = cuda::to_device_half(packed, h);
  const cuda::DeviceBuffer db = bias ? cuda::to_device_half(*bias, h) : cuda::DeviceBuffer();
  const cuda::DeviceBuffer dk = cuda::to_device(ktab.data(), ktab.size() * sizeof(KEntry));
  cuda::DeviceBuffer dout = cuda::half_output_buffer(os);
  if (os.numel() > 0) {
    cuda::DeviceBuffer partial;
    if (g.splits > 1) partial = cuda::DeviceBuffer::uninitialised(size_t(g.splits) * size_t(g.oc) * size_t(g.pixels) * sizeof(float));
    cuda::with_half_storage(h, [&](auto tag) {
      using T = decltype(tag);
      const T* b = bias ? db.as<T>() : nullptr;
      if (bm == 64) {
        launch_half<T, 64>(g, groups, k_row, dx.as<T>(), dw.as<T>(), b, dk.as<KEntry>(), dout.as<T>(), partial.as<float>());
      } else {
        launch_half<T, 128>(g, groups, k_row, dx.as<T>(), dw.as<T>(), b, dk.as<KEntry>(), dout.as<T>(), partial.as<float>());
      }
    });
    if (g.splits > 1) partial.check_guards("cuda conv2d (split-K partial sums)");
  }
  return cuda::to_host_half(dout, h, os, "cuda conv2d");
}
}  // namespace

Tensor conv2d_cuda(const Conv2dParams& p, const Tensor& x, const Tensor& w, const Tensor* bias) {
  check_conv2d_inputs(p, x, w, bias);
  cuda::require_gpu(Conv2dParams::kName);
  const Shape os = p.output_shape();
  // Offsets within one image, and every count below, are 32-bit; pixel and output indices 64-bit.
  if (p.x[1] * p.x[2] * p.x[3] > INT32_MAX || os[1] * os[2] * os[3] > INT32_MAX || p.reduction_length() > INT32_MAX - kHBK) {
    throw Error("cuda conv2d: an image or a filter of " + p.str() + " has more than 2^31 elements");
  }
  ConvGeometry g{};
  g.c = int(p.x[1]), g.h = int(p.x[2]), g.w = int(p.x[3]);
  g.oc = int(os[1]), g.ohw = int(os[2] * os[3]), g.ow = int(os[3]);
  g.kh = int(p.w[2]), g.kw = int(p.w[3]), g.sh = int(p.stride_h), g.sw = int(p.stride_w);
  g.ph = int(p.pad_h), g.pw = int(p.pad_w), g.dh = int(p.dil_h), g.dw = int(p.dil_w);
  const int groups = int(p.groups);
  g.c_per_group = g.c / groups, g.oc_per_group = g.oc / groups, g.k = int(p.reduction_length());
  g.pixels = p.x[0] * g.ohw;
  std::vector<KEntry> ktab(size_t(g.k));
  for (int k = 0; k < g.k; ++k) {
    const int64_t c = k / (g.kh * g.kw), kh = k / g.kw % g.kh, kw = k % g.kw, offset = (c * g.h + kh * g.dh) * g.w + kw * g.dw;
    if (offset > INT32_MAX - int64_t(g.h) * g.w) throw Error("cuda conv2d: the receptive field of " + p.str() + " spans more than 2^31 elements");
    ktab[size_t(k)] = {int(offset), int(kh * g.dh), int(kw * g.dw), 0};
  }
  if (const HalfType h = half_in_scope(); h != HalfType::None) return conv2d_half(g, groups, ktab, x, w, bias, os, h);
  const int bm = g.oc_per_group <= 64 ? 64 : 128;
  split_k(g, groups, bm, kBN, kBK, 8);

  const cuda::DeviceBuffer dx = cuda::to_device(x), dw = cuda::to_device(w);
  const cuda::DeviceBuffer db = bias ? cuda::to_device(*bias) : cuda::DeviceBuffer();
  const cuda::DeviceBuffer dk = cuda::to_device(ktab.data(), ktab.size() * sizeof(KEntry));
  cuda::DeviceBuffer dout = cuda::output_buffer(DType::Float32, os);
  if (os.numel() > 0) {
    cuda::DeviceBuffer partial;
    if (g.splits > 1) partial = cuda::DeviceBuffer::uninitialised(size_t(g.splits) * size_t(g.oc) * size_t(g.pixels) * sizeof(float));
    const float* b = bias ? db.as<float>() : nullptr;
    if (bm == 64) {
      launch<64>(g, groups, dx.as<float>(), dw.as<float>(), b, dk.as<KEntry>(), dout.as<float>(), partial.as<float>());
    } else {
      launch<128>(g, groups, dx.as<float>(), dw.as<float>(), b, dk.as<KEntry>(), dout.as<float>(), partial.as<float>());
    }
    if (g.splits > 1) partial.check_guards("cuda conv2d (split-K partial sums)");
  }
  return cuda::to_host(dout, DType::Float32, os, "cuda conv2d");
}

}  // namespace parity
