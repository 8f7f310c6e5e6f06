// argsort on the device: CUB's radix sort (stable) of (key, index) pairs, ascending or
// descending, on keys normalised so the order is the reference's (cuda_sort_key.cuh).
#include <cub/device/device_radix_sort.cuh>

#include "kernels/argsort/argsort.h"
#include "kernels/cuda_sort_key.cuh"
#include "kernels/cuda_util.h"

namespace parity {

namespace {
__global__ void keys_kernel(const float* __restrict__ x, int64_t n, float* __restrict__ keys, int64_t* __restrict__ index) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    keys[i] = cuda::sort_key(x[i]);
    index[i] = i;
  }
}
}  // namespace

Tensor argsort_cuda(const ArgsortParams& p, const Tensor& x) {
  check_inputs(ArgsortParams::kName, p.inputs(), {x});
  cuda::require_gpu(ArgsortParams::kName);
  const int64_t n = x.numel();
  const cuda::DeviceBuffer dx = cuda::to_device(x);
  cuda::DeviceBuffer keys(size_t(n) * 4), keys_out(size_t(n) * 4), index(size_t(n) * 8), out(size_t(n) * 8);
  if (n > 0) {
    cuda::kernel_begin();
    keys_kernel<<<cuda::blocks_for(n, 256), 256>>>(dx.as<float>(), n, keys.as<float>(), index.as<int64_t>());
    cuda::check_launch("keys_kernel (argsort)");
    size_t temp_bytes = 0;
    auto sort = [&](void* temp) {
      return p.descending ? cub::DeviceRadixSort::SortPairsDescending(temp, temp_bytes, keys.as<float>(), keys_out.as<float>(),
                                                                      index.as<int64_t>(), out.as<int64_t>(), n)
                          : cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys.as<float>(), keys_out.as<float>(), index.as<int64_t>(),
                                                            out.as<int64_t>(), n);
    };
    PARITY_CUDA_CHECK(sort(nullptr));
    cuda::DeviceBuffer temp(temp_bytes);
    cuda::kernel_begin();
    PARITY_CUDA_CHECK(sort(temp.data()));
    cuda::check_launch("cub::DeviceRadixSort (argsort)");
    keys_out.check_guards("cuda argsort (keys)");
  }
  return cuda::to_host(out, DType::Int64, p.x, "cuda argsort");
}

}  // namespace parity
