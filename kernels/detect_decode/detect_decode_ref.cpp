#include <cmath>

#include "core/thread_pool.h"
#include "kernels/detect_decode/detect_decode.h"

namespace parity {

Tensor detect_decode_ref(const DetectDecodeParams& p, const Tensor& x) {
  check_inputs(DetectDecodeParams::kName, p.inputs(), {x});
  Tensor out(DType::Float32, p.output_shape());
  const int64_t bs = p.x[0], na = p.na(), no = p.no(), ny = p.x[2], nx = p.x[3];
  const float* in = x.data<float>();
  float* o = out.mutable_data<float>();
  const auto stride = double(p.stride);
  parallel_for(bs * na, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t ba = b0; ba < b1; ++ba) {
      const int64_t a = ba % na;
      const float* src = in + ba * no * ny * nx;  // [no, ny, nx] of anchor a
      float* dst = o + ba * ny * nx * no;         // [ny, nx, no]
      for (int64_t iy = 0; iy < ny; ++iy) {
        for (int64_t ix = 0; ix < nx; ++ix) {
          float* cell = dst + (iy * nx + ix) * no;
          for (int64_t c = 0; c < no; ++c) {
            const double y = 1.0 / (1.0 + std::exp(-double(src[(c * ny + iy) * nx + ix])));
            double v = y;
            if (c == 0) v = (y * 2 + (double(ix) - 0.5)) * stride;
            if (c == 1) v = (y * 2 + (double(iy) - 0.5)) * stride;
            if (c == 2 || c == 3) v = (y * 2) * (y * 2) * p.anchors[size_t(2 * a + (c - 2))];
            cell[c] = float(v);
          }
        }
      }
    }
  });
  return out;
}

}  // namespace parity
