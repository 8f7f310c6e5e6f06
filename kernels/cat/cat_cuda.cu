// cat on the device in one launch for all inputs: the output viewed as [outer, row] with row the
// concatenation of each input's [along * inner] block; a thread finds its input by the prefix
// sums of the block sizes (a short linear scan: YOLOv5 joins 2 to 4 tensors). Elements are moved
// as unsigned integers of the dtype's size, so the copy is bit-exact for every dtype.
// Where every block is a whole number of 16-byte units (YOLOv5's channel blocks are), the copy
// moves 16 bytes per thread, one output row per grid row, with no 64-bit division per element.
// A half call moves its type's 16-bit elements.
#include <algorithm>
#include <cstdint>

#include "kernels/cat/cat.h"
#include "kernels/cuda_half.cuh"
#include "kernels/cuda_util.h"

namespace parity {

namespace {
struct Source {
  const void* data;
  int64_t row;    // elements per outer index
  int64_t start;  // where its block starts within an output row
};

template <typename T>
__global__ void cat_kernel(const Source* __restrict__ src, int count, T* __restrict__ out, int64_t out_row, int64_t total) {
  for (int64_t o = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; o < total; o += int64_t(gridDim.x) * blockDim.x) {
    const int64_t outer = o / out_row, col = o - outer * out_row;
    int k = 0;
    while (k + 1 < count && col >= src[k + 1].start) ++k;
    out[o] = static_cast<const T*>(src[k].data)[outer * src[k].row + (col - src[k].start)];
  }
}
// The same copy in 16-byte units (uint4): grid row = outer index, `row`/`start` counted in units.
__global__ void cat_units_kernel(const Source* __restrict__ src, int count, uint4* __restrict__ out, int64_t out_row) {
  const int64_t outer = blockIdx.y;
  for (int64_t col = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; col < out_row; col += int64_t(gridDim.x) * blockDim.x) {
    int k = 0;
    while (k + 1 < count && col >= src[k + 1].start) ++k;
    out[outer * out_row + col] = static_cast<const uint4*>(src[k].data)[outer * src[k].row + (col - src[k].start)];
  }
}
}  // namespace

Tensor cat_cuda(const CatParams& p, const std::vector<Tensor>& xs) {
  check_inputs(CatParams::kName, p.inputs(), xs);
  cuda::require_gpu(CatParams::kName);
  const Shape os = p.output_shape();
  const auto d = size_t(p.resolved_dim());
  int64_t inner = 1;
  for (size_t i = d + 1; i < os.rank(); ++i) inner *= os[i];
  std::vector<cuda::DeviceBuffer> inputs;
  std::vector<Source> sources;
  int64_t start = 0;
  for (const Tensor& x : xs) {
    if (CatParams::skipped(x.shape()) || x.numel() == 0) continue;  // contributes no element
    inputs.push_back(cuda::upload(x));
    sources.push_back({inputs.back().data(), x.shape()[d] * inner, start});
    start += x.shape()[d] * inner;
  }
  const bool half = p.dtype == DType::Float32 && half_in_scope() != HalfType::None;
  const size_t element = half ? 2 : dtype_size(p.dtype);
  cuda::DeviceBuffer out = half ? cuda::float_output(os) : cuda::output_buffer(p.dtype, os);
  const int64_t total = os.numel();
  if (total > 0 && !sources.empty()) {
    // Whole 16-byte units (every buffer starts 256-byte aligned): rows and starts counted in units.
    const int64_t unit = 16 / int64_t(element), outer = total / start;
    const bool in_units = outer <= 65535 && start % unit == 0 &&
                          std::all_of(sources.begin(), sources.end(), [&](const Source& s) { return s.row % unit == 0; });
    if (in_units) {
      for (Source& s : sources) s.row /= unit, s.start /= unit;
    }
    const cuda::DeviceBuffer table = cuda::to_device(sources.data(), sources.size() * sizeof(Source));
    const auto* src = table.as<Source>();
    const int count = int(sources.size());
    cuda::kernel_begin();
    if (in_units) {
      const dim3 grid(std::min(cuda::blocks_for(start / unit, 256), 65535u), unsigned(outer));
      cat_units_kernel<<<grid, 256>>>(src, count, out.as<uint4>(), start / unit);
    } else {
      const unsigned blocks = cuda::blocks_for(total, 256);
      switch (element) {
        case 1: cat_kernel<<<blocks, 256>>>(src, count, out.as<uint8_t>(), start, total); break;
        case 2: cat_kernel<<<blocks, 256>>>(src, count, out.as<uint16_t>(), start, total); break;
        case 4: cat_kernel<<<blocks, 256>>>(src, count, out.as<uint32_t>(), start, total); break;
        case 8: cat_kernel<<<blocks, 256>>>(src, count, out.as<uint64_t>(), start, total); break;
        default: throw Error("cuda cat: unsupported element size");
      }
    }
    cuda::check_launch(in_units ? "cat_units_kernel" : "cat_kernel");
    table.check_guards("cuda cat (source table)");
  }
  return half ? cuda::download_float(out, os, "cuda cat") : cuda::to_host(out, p.dtype, os, "cuda cat");
}

}  // namespace parity
