#pragma once
// Elementwise maps on the device: f32 inputs read and written 16 bytes at a time (float4; buffers
// are 256-byte aligned) with a scalar tail, a half call's 16-bit elements eight to 16 bytes,
// other dtypes one element at a time; grid-stride loops. The maths runs in float64 and rounds
// once, as the reference does: these ops are bound by memory bandwidth, so the wider arithmetic
// costs nothing measurable and the results match the reference bit for bit (up to exp's
// last-ulp differences in float64, invisible after rounding). A half call's results are rounded
// from float64 straight to its type (cuda_half.cuh's narrow), never through float32.
#include <cstdint>
#include <type_traits>

#include "kernels/cuda_half.cuh"
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

// Eight 16-bit elements (T: __half or __nv_bfloat16) per 16-byte load and store, a scalar tail.
template <typename T, typename F> __global__ void map_half_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n, F f) {
  const int64_t n8 = n / 8, stride = int64_t(gridDim.x) * blockDim.x;
  const auto* x8 = reinterpret_cast<const uint4*>(x);
  auto* y8 = reinterpret_cast<uint4*>(y);
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n8; i += stride) {
    uint4 r = x8[i];
    T* e = reinterpret_cast<T*>(&r);
#pragma unroll
    for (int k = 0; k < 8; ++k) e[k] = narrow<T>(f(double(widen(e[k]))));
    y8[i] = r;
  }
  for (int64_t j = n8 * 8 + int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < n; j += stride) y[j] = narrow<T>(f(double(widen(x[j]))));
}

template <typename T, typename F>
__global__ void zip_half_kernel(const T* __restrict__ x, const T* __restrict__ y, T* __restrict__ z, int64_t n, F f) {
  const int64_t n8 = n / 8, stride = int64_t(gridDim.x) * blockDim.x;
  const auto* x8 = reinterpret_cast<const uint4*>(x);
  const auto* y8 = reinterpret_cast<const uint4*>(y);
  auto* z8 = reinterpret_cast<uint4*>(z);
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n8; i += stride) {
    uint4 a = x8[i];
    const uint4 b = y8[i];
    T* ea = reinterpret_cast<T*>(&a);
    const T* eb = reinterpret_cast<const T*>(&b);
#pragma unroll
    for (int k = 0; k < 8; ++k) ea[k] = narrow<T>(f(double(widen(ea[k])), double(widen(eb[k]))));
    z8[i] = a;
  }
  for (int64_t j = n8 * 8 + int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < n; j += stride) {
    z[j] = narrow<T>(f(double(widen(x[j])), double(widen(y[j]))));
  }
}

// A half call's zip (kZip: f(x, y)) or map (f(x), y null): inputs packed to the type, outputs
// widened back.
template <bool kZip, typename F> Tensor elementwise_half(const char* op, HalfType h, const Tensor& x, const Tensor* y, F f) {
  const DeviceBuffer dx = to_device_half(x, h);
  const DeviceBuffer dy = y ? to_device_half(*y, h) : DeviceBuffer();
  DeviceBuffer dz = half_output_buffer(x.shape());
  const int64_t n = x.numel();
  constexpr int kThreads = 256;
  if (n > 0) {
    cuda::kernel_begin();
    with_half_storage(h, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (kZip) {
        zip_half_kernel<<<blocks_for((n + 7) / 8, kThreads), kThreads>>>(dx.as<T>(), dy.as<T>(), dz.as<T>(), n, f);
      } else {
        map_half_kernel<<<blocks_for((n + 7) / 8, kThreads), kThreads>>>(dx.as<T>(), dz.as<T>(), n, f);
      }
    });
    check_launch(op);
  }
  return to_host_half(dz, h, x.shape(), std::string("cuda ") + op);
}

// y = f(x) for float32 or float64 x; a half call's float32 x in its type.
template <typename F> Tensor map_float(const char* op, const Tensor& x, F f) {
  require_gpu(op);
  if (x.dtype() == DType::Float32 && half_in_scope() != HalfType::None) return elementwise_half<false>(op, half_in_scope(), x, nullptr, f);
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
// as ref_util.h's zip_ref calls it (integers as their unsigned type, so wrap-around is defined);
// a half call's float32 tensors in its type, f called on float64.
template <typename F> Tensor zip(const char* op, const Tensor& x, const Tensor& y, F f) {
  require_gpu(op);
  if (x.dtype() == DType::Float32 && half_in_scope() != HalfType::None) return elementwise_half<true>(op, half_in_scope(), x, &y, f);
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
