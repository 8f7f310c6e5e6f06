// The conv2d reference: im2col in float64, one BLAS dgemm per (image, group), bias added in
// float64, one rounding to the output type at the end. Float32 products are exact in float64,
// so the only error before the final rounding is the dgemm's summation (~1e-16 relative).
// Deterministic for a given thread count: OpenBLAS splits the M and N dimensions of a dgemm
// across threads, never the reduction.
#include <cblas.h>

#include <mutex>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/conv2d/conv2d.h"

namespace parity {

namespace {

template <typename Out> Tensor conv2d_impl(const Conv2dParams& p, const Tensor& x, const Tensor& w, const Tensor* bias) {
  check_conv2d_inputs(p, x, w, bias);
  static std::once_flag blas_threads;
  std::call_once(blas_threads, [] { openblas_set_num_threads(num_threads()); });

  const Shape out_shape = p.output_shape();
  Tensor out(dtype_of<Out>(), out_shape);
  const int64_t N = p.x[0], IC = p.x[1], H = p.x[2], W = p.x[3];
  const int64_t OC = p.w[0], KH = p.w[2], KW = p.w[3], OH = out_shape[2], OW = out_shape[3];
  const int64_t G = p.groups, ICg = IC / G, OCg = OC / G, K = ICg * KH * KW, OHW = OH * OW;
  if (out.numel() == 0) return out;

  std::vector<double> wd(size_t(w.numel()));
  for (int64_t i = 0; i < w.numel(); ++i) wd[size_t(i)] = w.data<float>()[i];
  std::vector<double> col(size_t(K * OHW)), acc(size_t(OCg * OHW));
  const float* xp = x.data<float>();
  const float* bp = bias ? bias->data<float>() : nullptr;
  Out* op = out.mutable_data<Out>();

  for (int64_t n = 0; n < N; ++n) {
    for (int64_t g = 0; g < G; ++g) {
      // col[k][oh*OW + ow], k = (c*KH + kh)*KW + kw: the input pixel each kernel tap sees.
      parallel_for(K, 1, [&](int64_t k0, int64_t k1) {
        for (int64_t k = k0; k < k1; ++k) {
          const int64_t c = k / (KH * KW), kh = (k / KW) % KH, kw = k % KW;
          const float* plane = xp + ((n * IC) + g * ICg + c) * H * W;
          double* row = col.data() + k * OHW;
          for (int64_t oh = 0; oh < OH; ++oh) {
            const int64_t ih = oh * p.stride_h - p.pad_h + kh * p.dil_h;
            for (int64_t ow = 0; ow < OW; ++ow) {
              const int64_t iw = ow * p.stride_w - p.pad_w + kw * p.dil_w;
              const bool inside = ih >= 0 && ih < H && iw >= 0 && iw < W;
              row[oh * OW + ow] = inside ? double(plane[ih * W + iw]) : 0.0;
            }
          }
        }
      });
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(OCg), int(OHW), int(K), 1.0,
                  wd.data() + g * OCg * K, int(K), col.data(), int(OHW), 0.0, acc.data(), int(OHW));
      Out* dst = op + (n * OC + g * OCg) * OHW;
      parallel_for(OCg, 1, [&](int64_t o0, int64_t o1) {
        for (int64_t o = o0; o < o1; ++o) {
          const double b = bp ? double(bp[g * OCg + o]) : 0.0;
          for (int64_t i = 0; i < OHW; ++i) dst[o * OHW + i] = Out(acc[size_t(o * OHW + i)] + b);
        }
      });
    }
  }
  return out;
}

}  // namespace

Tensor conv2d_ref(const Conv2dParams& p, const Tensor& x, const Tensor& w, const Tensor* bias) {
  return conv2d_impl<float>(p, x, w, bias);
}

Tensor conv2d_ref_f64(const Conv2dParams& p, const Tensor& x, const Tensor& w, const Tensor* bias) {
  return conv2d_impl<double>(p, x, w, bias);
}

}  // namespace parity
