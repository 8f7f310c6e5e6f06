#pragma once
// Device side of half precision (cuda_util.h, "Half precision"): the storage type of each
// HalfType, loads widened to float, stores rounded once to nearest even, and a launcher that
// picks the storage type of the call in scope.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/call.h"
#include "kernels/cuda_util.h"

namespace parity::cuda {

__device__ __forceinline__ float widen(float v) { return v; }
__device__ __forceinline__ float widen(__half v) { return __half2float(v); }
__device__ __forceinline__ float widen(__nv_bfloat16 v) { return __bfloat162float(v); }

// From float64, rounded once (no float32 step between: that would round twice).
template <typename T> __device__ __forceinline__ T narrow(double v);
template <> __device__ __forceinline__ float narrow<float>(double v) { return float(v); }
template <> __device__ __forceinline__ __half narrow<__half>(double v) { return __double2half(v); }
template <> __device__ __forceinline__ __nv_bfloat16 narrow<__nv_bfloat16>(double v) { return __double2bfloat16(v); }
// From float32, rounded once.
template <typename T> __device__ __forceinline__ T narrow_float(float v);
template <> __device__ __forceinline__ float narrow_float<float>(float v) { return v; }
template <> __device__ __forceinline__ __half narrow_float<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 narrow_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// Calls f(T{}) with T the element type a float32 tensor has on the device in `h`: float for
// HalfType::None, __half for Fp16, __nv_bfloat16 for Bf16.
template <typename F> void with_storage(HalfType h, F f) {
  switch (h) {
    case HalfType::Fp16: f(__half{}); break;
    case HalfType::Bf16: f(__nv_bfloat16{}); break;
    default: f(float{}); break;
  }
}
// The same for a half type only (kernels that move 16-bit elements eight to a 16-byte load).
template <typename F> void with_half_storage(HalfType h, F f) {
  switch (h) {
    case HalfType::Fp16: f(__half{}); break;
    case HalfType::Bf16: f(__nv_bfloat16{}); break;
    default: throw Error("cuda: a half kernel launched for a float32 call");
  }
}

// A float32 tensor uploaded as the call in scope stores it, and a float output of `shape` of that
// storage, and the output copied back to float32: with the two functions below, an op's host code
// is the same for every precision.
inline DeviceBuffer upload(const Tensor& t) {
  const HalfType h = half_in_scope();
  return (h != HalfType::None && t.dtype() == DType::Float32) ? to_device_half(t, h) : to_device(t);
}
inline DeviceBuffer float_output(const Shape& shape) {
  return half_in_scope() == HalfType::None ? output_buffer(DType::Float32, shape) : half_output_buffer(shape);
}
inline Tensor download_float(const DeviceBuffer& b, const Shape& shape, const std::string& what) {
  const HalfType h = half_in_scope();
  return h == HalfType::None ? to_host(b, DType::Float32, shape, what) : to_host_half(b, h, shape, what);
}

}  // namespace parity::cuda
