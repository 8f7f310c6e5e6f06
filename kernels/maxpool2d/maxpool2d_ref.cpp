#include <cmath>
#include <limits>

#include "core/thread_pool.h"
#include "kernels/maxpool2d/maxpool2d.h"

namespace parity {

Tensor maxpool2d_ref(const Maxpool2dParams& p, const Tensor& x) {
  check_inputs(Maxpool2dParams::kName, p.inputs(), {x});
  const Shape os = p.output_shape();
  Tensor out(DType::Float32, os);
  const int64_t H = p.x[2], W = p.x[3], OH = os[2], OW = os[3];
  const float* in = x.data<float>();
  float* o = out.mutable_data<float>();
  parallel_for(p.x[0] * p.x[1], 1, [&](int64_t b, int64_t e) {
    for (int64_t plane = b; plane < e; ++plane) {
      const float* src = in + plane * H * W;
      float* dst = o + plane * OH * OW;
      for (int64_t oh = 0; oh < OH; ++oh) {
        for (int64_t ow = 0; ow < OW; ++ow) {
          float best = -std::numeric_limits<float>::infinity();
          for (int64_t kh = 0; kh < p.k_h; ++kh) {
            const int64_t ih = oh * p.stride_h - p.pad_h + kh * p.dil_h;
            if (ih < 0 || ih >= H) continue;
            for (int64_t kw = 0; kw < p.k_w; ++kw) {
              const int64_t iw = ow * p.stride_w - p.pad_w + kw * p.dil_w;
              if (iw < 0 || iw >= W) continue;
              const float v = src[ih * W + iw];
              if (v > best || std::isnan(v)) best = v;
              if (std::isnan(best)) break;
            }
            if (std::isnan(best)) break;
          }
          dst[oh * OW + ow] = best;
        }
      }
    }
  });
  return out;
}

}  // namespace parity
