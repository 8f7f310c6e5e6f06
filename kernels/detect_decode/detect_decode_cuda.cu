// detect_decode on the device: one thread per output element, the reference's float64 formulas
// (compiled without contraction), rounded once (a half call's straight to its type).
#include "kernels/cuda_half.cuh"
#include "kernels/cuda_util.h"
#include "kernels/detect_decode/detect_decode.h"

namespace parity {

namespace {
constexpr int kMaxAnchors = 16;
struct Decode {
  int64_t na, no, ny, nx, total;
  double stride;
  double anchors[2 * kMaxAnchors];
};

template <typename T> __global__ void detect_decode_kernel(const T* __restrict__ x, T* __restrict__ out, Decode g) {
  for (int64_t o = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; o < g.total; o += int64_t(gridDim.x) * blockDim.x) {
    // out is [bs*na, ny, nx, no]; x is [bs*na, no, ny, nx].
    const int64_t c = o % g.no, r1 = o / g.no, ix = r1 % g.nx, r2 = r1 / g.nx, iy = r2 % g.ny, ba = r2 / g.ny, a = ba % g.na;
    const double y = 1.0 / (1.0 + exp(-double(cuda::widen(x[((ba * g.no + c) * g.ny + iy) * g.nx + ix]))));
    double v = y;
    if (c == 0) v = (y * 2 + (double(ix) - 0.5)) * g.stride;
    if (c == 1) v = (y * 2 + (double(iy) - 0.5)) * g.stride;
    if (c == 2 || c == 3) v = (y * 2) * (y * 2) * g.anchors[2 * a + (c - 2)];
    out[o] = cuda::narrow<T>(v);
  }
}
}  // namespace

Tensor detect_decode_cuda(const DetectDecodeParams& p, const Tensor& x) {
  check_inputs(DetectDecodeParams::kName, p.inputs(), {x});
  cuda::require_gpu(DetectDecodeParams::kName);
  if (p.na() > kMaxAnchors) throw Error("cuda detect_decode: more than " + std::to_string(kMaxAnchors) + " anchors");
  const Shape os = p.output_shape();
  Decode g{};
  g.na = p.na(), g.no = p.no(), g.ny = p.x[2], g.nx = p.x[3], g.total = os.numel(), g.stride = double(p.stride);
  for (size_t i = 0; i < p.anchors.size(); ++i) g.anchors[i] = p.anchors[i];
  const cuda::DeviceBuffer dx = cuda::upload(x);
  cuda::DeviceBuffer out = cuda::float_output(os);
  if (g.total > 0) {
    cuda::kernel_begin();
    cuda::with_storage(half_in_scope(), [&](auto tag) {
      using T = decltype(tag);
      detect_decode_kernel<<<cuda::blocks_for(g.total, 256), 256>>>(dx.as<T>(), out.as<T>(), g);
    });
    cuda::check_launch("detect_decode_kernel");
  }
  return cuda::download_float(out, os, "cuda detect_decode");
}

}  // namespace parity
