// mul on the device: one multiplication in the dtype (correctly rounded, as the reference's);
// integers wrap around (computed unsigned, so the wrap is defined behaviour).
#include <type_traits>

#include "kernels/cuda_util.h"
#include "kernels/mul/mul.h"

namespace parity {

namespace {
template <typename T> __global__ void mul_kernel(const T* __restrict__ x, const T* __restrict__ y, T* __restrict__ z, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    if constexpr (std::is_floating_point_v<T>) {
      z[i] = x[i] * y[i];
    } else {
      using U = std::make_unsigned_t<T>;
      z[i] = T(U(x[i]) * U(y[i]));
    }
  }
}

template <typename T> void launch(const cuda::DeviceBuffer& x, const cuda::DeviceBuffer& y, cuda::DeviceBuffer& z, int64_t n) {
  mul_kernel<<<cuda::blocks_for(n, 256), 256>>>(x.as<T>(), y.as<T>(), z.as<T>(), n);
}
}  // namespace

Tensor mul_cuda(const MulParams& p, const Tensor& x, const Tensor& y) {
  check_inputs(MulParams::kName, p.inputs(), {x, y});
  cuda::require_gpu(MulParams::kName);
  const cuda::DeviceBuffer dx = cuda::to_device(x), dy = cuda::to_device(y);
  cuda::DeviceBuffer dz = cuda::output_buffer(x.dtype(), x.shape());
  const int64_t n = x.numel();
  if (n > 0) {
    switch (x.dtype()) {
      case DType::Float32: launch<float>(dx, dy, dz, n); break;
      case DType::Float64: launch<double>(dx, dy, dz, n); break;
      case DType::Int32: launch<int32_t>(dx, dy, dz, n); break;
      case DType::Int64: launch<int64_t>(dx, dy, dz, n); break;
      default: throw Error("cuda mul: unsupported dtype " + std::string(dtype_name(x.dtype())));
    }
    cuda::check_launch("mul_kernel");
  }
  return cuda::to_host(dz, x.dtype(), x.shape(), "cuda mul");
}

}  // namespace parity
