// detect_decode on the device: one thread per output element, the reference's float64 formulas
// (compiled without contraction), rounded once.
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

__global__ void detect_decode_kernel(const float* __restrict__ x, float* __restrict__ out, Decode g) {
  for (int64_t o = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; o < g.total; o += int64_t(gridDim.x) * blockDim.x) {
    // out is [bs*na, ny, nx, no]; x is [bs*na, no, ny, nx].
    const int64_t c = o % g.no, r1 = o / g.no, ix = r1 % g.nx, r2 = r1 / g.nx, iy = r2 % g.ny, ba = r2 / g.ny, a = ba % g.na;
    const double y = 1.0 / (1.0 + exp(-double(x[((ba * g.no + c) * g.ny + iy) * g.nx + ix])));
    double v = y;
    if (c == 0) v = (y * 2 + (double(ix) - 0.5)) * g.stride;
    if (c == 1) v = (y * 2 + (double(iy) - 0.5)) * g.stride;
    if (c == 2 || c == 3) v = (y * 2) * (y * 2) * g.anchors[2 * a + (c - 2)];
    out[o] = float(v);
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
  const cuda::DeviceBuffer dx = cuda::to_device(x);
  cuda::DeviceBuffer out = cuda::output_buffer(DType::Float32, os);
  if (g.total > 0) {
    cuda::kernel_begin();
    detect_decode_kernel<<<cuda::blocks_for(g.total, 256), 256>>>(dx.as<float>(), out.as<float>(), g);
    cuda::check_launch("detect_decode_kernel");
  }
  return cuda::to_host(out, DType::Float32, os, "cuda detect_decode");
}

}  // namespace parity
