// nonzero on the device: CUB's DeviceSelect keeps the flat indices of nonzero elements in
// ascending order (a stable selection, so the order is the reference's row-major one), then one
// thread per kept element writes its coordinates.
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "kernels/cuda_shape.cuh"
#include "kernels/nonzero/nonzero.h"

namespace parity {

namespace {
// The reference's rule: NaN is nonzero, -0.0 is zero (for float16, by its bits).
template <typename T> struct IsNonzero {
  const T* x;
  __device__ bool operator()(int64_t i) const {
    if constexpr (std::is_same_v<T, uint16_t>) {
      return (x[i] & 0x7fffu) != 0;
    } else {
      return !(x[i] == T(0));
    }
  }
};

__global__ void coordinates_kernel(const int64_t* __restrict__ flat, const int64_t* __restrict__ count, cuda::Dims dims,
                                   int64_t* __restrict__ out) {
  const int64_t n = *count;
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += int64_t(gridDim.x) * blockDim.x) {
    int64_t rest = flat[k];
    for (int d = dims.rank - 1; d >= 0; --d) {
      out[k * dims.rank + d] = rest % dims.d[d];
      rest /= dims.d[d];
    }
  }
}

template <typename T> void select(const cuda::DeviceBuffer& x, int64_t n, cuda::DeviceBuffer& flat, cuda::DeviceBuffer& count) {
  const thrust::counting_iterator<int64_t> first(0);
  const IsNonzero<T> pred{x.as<T>()};
  size_t temp_bytes = 0;
  PARITY_CUDA_CHECK(cub::DeviceSelect::If(nullptr, temp_bytes, first, flat.as<int64_t>(), count.as<int64_t>(), n, pred));
  cuda::DeviceBuffer temp(temp_bytes);
  cuda::kernel_begin();
  PARITY_CUDA_CHECK(cub::DeviceSelect::If(temp.data(), temp_bytes, first, flat.as<int64_t>(), count.as<int64_t>(), n, pred));
  cuda::check_launch("cub::DeviceSelect::If (nonzero)");
}
}  // namespace

Tensor nonzero_cuda(const NonzeroParams& p, const Tensor& x) {
  check_inputs(NonzeroParams::kName, p.inputs(), {x});
  cuda::require_gpu(NonzeroParams::kName);
  const cuda::Dims dims = cuda::dims_of(p.x, NonzeroParams::kName);
  const int64_t n = x.numel();
  const cuda::DeviceBuffer dx = cuda::to_device(x);
  cuda::DeviceBuffer flat(size_t(n) * sizeof(int64_t)), count(sizeof(int64_t));
  PARITY_CUDA_CHECK(cudaMemset(count.data(), 0, sizeof(int64_t)));
  if (n > 0) {
    switch (p.dtype) {
      case DType::Bool:
      case DType::UInt8: select<uint8_t>(dx, n, flat, count); break;
      case DType::Float16: select<uint16_t>(dx, n, flat, count); break;
      case DType::Float32: select<float>(dx, n, flat, count); break;
      case DType::Float64: select<double>(dx, n, flat, count); break;
      case DType::Int32: select<int32_t>(dx, n, flat, count); break;
      case DType::Int64: select<int64_t>(dx, n, flat, count); break;
    }
  }
  count.check_guards("cuda nonzero (count)");
  flat.check_guards("cuda nonzero (indices)");
  const int64_t kept = cuda::read_scalar(count.as<int64_t>());
  cuda::DeviceBuffer out(size_t(kept * dims.rank) * sizeof(int64_t));
  if (kept > 0 && dims.rank > 0) {
    cuda::kernel_begin();
    coordinates_kernel<<<cuda::blocks_for(kept, 256), 256>>>(flat.as<int64_t>(), count.as<int64_t>(), dims, out.as<int64_t>());
    cuda::check_launch("coordinates_kernel (nonzero)");
  }
  return cuda::to_host(out, DType::Int64, Shape{kept, int64_t(dims.rank)}, "cuda nonzero");
}

}  // namespace parity
