#pragma once
// Elementwise maps on the device: f32 inputs read and written 16 bytes at a time (float4; buffers
// are 256-byte aligned) with a scalar tail, other dtypes one element at a time; grid-stride loops.
// The maths runs in float64 and rounds once, as the reference does: these ops are bound by memory
// bandwidth, so the wider arithmetic costs nothing measurable and the results match the
// reference bit for bit (up to exp's last-ulp differences in float64, invisible after rounding).
#include <cstdint>
#include <type_traits>

#include "kernels/cuda_util.h"

namespace parity::cuda {

template <typename F> __device__ __forceinline__ float4 map4(float4 v, F f) {
  return make_float4(float(f(double(v.x))), float(f(double(v.y))), float(f(double(v.z))), float(f(double(v.w))));
}

// Two float4 per thread and step, both loads issued before either is used: twice the bytes in
// flight while the float64 maths of the first runs (silu's exp and division keep the double
// units busy as long as memory takes).
template <typename F> __global__ void map_f32_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n, F f) {
  const int64_t n4 = n / 4;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const auto* x4 = reinterpret_cast<const float4*>(x);
  auto* y4 = reinterpret_cast<float4*>(y);
  int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + stride < n4; i += 2 * stride) {
    const float4 a = x4[i], b = x4[i + stride];
    y4[i] = map4(a, f);
    y4[i + stride] = map4(b, f);
  }
  if (i < n4) y4[i] = map4(x4[i], f);
  for (int64_t j = n4 * 4 + int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < n; j += stride) y[j] = float(f(double(x[j])));
}

template <typename T, typename F> __global__ void map_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n, F f) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    y[i] = T(f(double(x[i])));
  }
}

// y = f(x) for float32 or float64 x.
template <typename F> Tensor map_float(const char* op, const Tensor& x, F f) {
  require_gpu(op);
  const DeviceBuffer dx = to_device(x);
  DeviceBuffer dy = output_buffer(x.dtype(), x.shape());
  const int64_t n = x.numel();
  constexpr int kThreads = 256;
  if (n > 0) {
    cuda::kernel_begin();
    if (x.dtype() == DType::Float32) {
      map_f32_kernel<<<blocks_for((n + 7) / 8, kThreads), kThreads>>>(dx.as<float>(), dy.as<float>(), n, f);
    } else {
      map_kernel<<<blocks_for(n, kThreads), kThreads>>>(dx.as<double>(), dy.as<double>(), n, f);
    }
    check_launch(op);
  }
  return to_host(dy, x.dtype(), x.shape(), std::string("cuda ") + op);
}

template <typename T, typename F>
__global__ void zip_kernel(const T* __restrict__ x, const T* __restrict__ y, T* __restrict__ z, int64_t n, F f) {
  using A = wrapping_t<T>;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    z[i] = T(f(A(x[i]), A(y[i])));
  }
}

// z = f(x, y) for two tensors of one shape and dtype (float32, float64, int32, int64), f called
// as ref_util.h's zip_ref calls it (integers as their unsigned type, so wrap-around is defined).
template <typename F> Tensor zip(const char* op, const Tensor& x, const Tensor& y, F f) {
  require_gpu(op);
  const DeviceBuffer dx = to_device(x), dy = to_device(y);
  DeviceBuffer dz = output_buffer(x.dtype(), x.shape());
  const int64_t n = x.numel();
  constexpr int kThreads = 256;
  auto launch = [&](auto tag) {
    using T = decltype(tag);
    cuda::kernel_begin();
    zip_kernel<<<blocks_for(n, kThreads), kThreads>>>(dx.as<T>(), dy.as<T>(), dz.as<T>(), n, f);
  };
  if (n > 0) {
    switch (x.dtype()) {
      case DType::Float32: launch(float{}); break;
      case DType::Float64: launch(double{}); break;
      case DType::Int32: launch(int32_t{}); break;
      case DType::Int64: launch(int64_t{}); break;
      default: throw Error(std::string("cuda ") + op + ": unsupported dtype " + std::string(dtype_name(x.dtype())));
    }
    check_launch(op);
  }
  return to_host(dz, x.dtype(), x.shape(), std::string("cuda ") + op);
}

}  // namespace parity::cuda
