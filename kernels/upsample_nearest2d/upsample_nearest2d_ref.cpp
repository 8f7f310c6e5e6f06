#include "core/thread_pool.h"
#include "kernels/upsample_nearest2d/upsample_nearest2d.h"

namespace parity {

Tensor upsample_nearest2d_ref(const UpsampleNearest2dParams& p, const Tensor& x) {
  check_inputs(UpsampleNearest2dParams::kName, p.inputs(), {x});
  const Shape os = p.output_shape();
  Tensor out(DType::Float32, os);
  const int64_t H = p.x[2], W = p.x[3], OH = os[2], OW = os[3];
  const float* in = x.data<float>();
  float* o = out.mutable_data<float>();
  parallel_for(p.x[0] * p.x[1], 1, [&](int64_t b, int64_t e) {
    for (int64_t plane = b; plane < e; ++plane) {
      for (int64_t oy = 0; oy < OH; ++oy) {
        const float* row = in + plane * H * W + (oy / p.scale_h) * W;
        float* dst = o + plane * OH * OW + oy * OW;
        for (int64_t ox = 0; ox < OW; ++ox) dst[ox] = row[ox / p.scale_w];
      }
    }
  });
  return out;
}

}  // namespace parity
