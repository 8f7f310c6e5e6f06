// max_dim on the device: one thread per output element scans its column along dim in the
// reference's order (first index wins ties; the first NaN wins and ends the scan).
#include "kernels/cuda_util.h"
#include "kernels/max_dim/max_dim.h"

namespace parity {

namespace {
__global__ void max_dim_kernel(const float* __restrict__ x, int64_t outer, int64_t len, int64_t inner, float* __restrict__ values,
                               int64_t* __restrict__ indices) {
  for (int64_t o = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; o < outer * inner; o += int64_t(gridDim.x) * blockDim.x) {
    const int64_t ou = o / inner, k = o - ou * inner;
    const float* col = x + ou * len * inner + k;
    float best = col[0];
    int64_t at = 0;
    for (int64_t i = 1; i < len && !isnan(best); ++i) {
      const float c = col[i * inner];
      if (c > best || isnan(c)) best = c, at = i;
    }
    values[o] = best;
    indices[o] = at;
  }
}
}  // namespace

std::vector<Tensor> max_dim_cuda(const MaxDimParams& p, const Tensor& x) {
  check_inputs(MaxDimParams::kName, p.inputs(), {x});
  cuda::require_gpu(MaxDimParams::kName);
  const auto d = size_t(p.resolved_dim());
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < d; ++i) outer *= p.x[i];
  for (size_t i = d + 1; i < p.x.rank(); ++i) inner *= p.x[i];
  const Shape os = p.output_shape();
  const cuda::DeviceBuffer dx = cuda::to_device(x);
  cuda::DeviceBuffer values = cuda::output_buffer(DType::Float32, os), indices(size_t(os.numel()) * sizeof(int64_t));
  if (outer * inner > 0 && p.x[d] > 0) {
    cuda::kernel_begin();
    max_dim_kernel<<<cuda::blocks_for(outer * inner, 256), 256>>>(dx.as<float>(), outer, p.x[d], inner, values.as<float>(),
                                                                  indices.as<int64_t>());
    cuda::check_launch("max_dim_kernel");
  }
  return {cuda::to_host(values, DType::Float32, os, "cuda max_dim (values)"), cuda::to_host(indices, DType::Int64, os, "cuda max_dim (indices)")};
}

}  // namespace parity
