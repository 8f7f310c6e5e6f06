#pragma once
// What every <op>_cuda.cu shares: checked CUDA calls, device memory owned by RAII buffers with
// guard regions, and host <-> device copies of parity tensors. Included from .cu files only
// (LibTorch's headers stay out of them: they cost 16 s per file to compile).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/half.h"
#include "core/tensor.h"

namespace parity::cuda {

// Throws parity::Error "CUDA <what>: <error string>" unless `status` is cudaSuccess.
void check(cudaError_t status, const char* what);
#define PARITY_CUDA_CHECK(call) ::parity::cuda::check((call), #call)

// Brackets the op's own device work for `parity bench`: kernel_begin() just before a launch (or a
// library call's launches, CUB's), check_launch() just after. Only the GPU time between the two
// counts as kernel time (gpu.h's GpuCosts), not the allocations, fills, guards and transfers
// around them.
void kernel_begin();
// After a launch: the launch error, then (kernels run asynchronously) the execution error, so a
// fault is reported by the launch that caused it.
void check_launch(const char* kernel);

// Blocks of `threads` covering n items, capped so grid-stride loops take the rest.
inline unsigned blocks_for(int64_t n, int threads) {
  const int64_t b = (n + threads - 1) / threads;
  return unsigned(b < 1 ? 1 : (b > 65535 * 16 ? 65535 * 16 : b));
}

// Device memory for `bytes`, with kGuardBytes before and after filled with kSentinel. Every op
// checks the guards of its outputs after its kernels ran: a kernel that writes outside its output
// is an error naming the op, not silent corruption. Move-only; returned to a cache on destruction
// (below). No managed memory anywhere.
//
// The cache keeps freed blocks by size and hands them out again, so a model run, whose layers ask
// for the same sizes batch after batch, stops calling cudaMalloc/cudaFree (each a device-wide
// synchronisation) after its first pass. When cudaMalloc runs out of memory the cache is emptied
// and the allocation tried once more. PARITY_CUDA_NO_CACHE=1 turns it off, so that
// compute-sanitizer sees every free (a use after free inside the cache is invisible to it).
class DeviceBuffer {
 public:
  static constexpr size_t kGuardBytes = 256;  // keeps data() 256-byte aligned, as cudaMalloc's
  static constexpr unsigned char kSentinel = 0xA5;

  // Bytes an output's data holds until a kernel writes it: 0xFF is a NaN in every float format,
  // so an unwritten float element can never pass as a small number (0xA5 bytes read as -3e-16).
  static constexpr unsigned char kUnwrittenFloat = 0xFF;

  DeviceBuffer() = default;
  // The data takes `data_fill` (default: the sentinel), the guards always the sentinel.
  explicit DeviceBuffer(size_t bytes, unsigned char data_fill = kSentinel);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  // Data left as the allocation finds it, guards filled: for buffers a copy or a kernel overwrites
  // whole before anything reads them (uploads, workspaces).
  static DeviceBuffer uninitialised(size_t bytes);
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return base_ ? static_cast<unsigned char*>(base_) + kGuardBytes : nullptr; }
  template <typename T> T* as() const { return static_cast<T*>(data()); }
  size_t bytes() const { return bytes_; }
  // Throws parity::Error naming `what` when a guard byte changed.
  void check_guards(const std::string& what) const;

 private:
  struct NoFill {};
  DeviceBuffer(size_t bytes, NoFill);
  void release();
  void* base_ = nullptr;
  size_t bytes_ = 0;
};

DeviceBuffer to_device(const Tensor& t);
// `bytes` of host memory at `data` (a kernel's lookup table).
DeviceBuffer to_device(const void* data, size_t bytes);
// An op's output of `dtype` and `shape`: float data pre-filled with NaN, integer data with the
// sentinel, so that an element no kernel wrote differs from the reference.
DeviceBuffer output_buffer(DType dtype, const Shape& shape);
// Checks the guards, then copies `shape` elements of `dtype` back.
Tensor to_host(const DeviceBuffer& b, DType dtype, const Shape& shape, const std::string& what);

// ---- Half precision ----
// A half call (`precision=fp16|bf16`, kernels/call.h) carries float32 tensors holding values of
// its type. The cuda backend runs each op inside a HalfScope of its call's type (kernels/call.h);
// an op with a half kernel reads half_in_scope(), uploads its float inputs packed into 16-bit
// elements of that type, runs the kernel on them (half loads and stores, float32 or float64
// arithmetic) and widens its 16-bit outputs back to float32 (exact). The packing and widening run
// on the host, as the aten backends convert a half call's tensors: the device sees only the
// type's own bytes.
// A float32 tensor's values rounded to `h` (a no-op for a half call's inputs) as 16-bit elements
// on the device.
DeviceBuffer to_device_half(const Tensor& t, HalfType h);
// An output of `shape` 16-bit elements, pre-filled with 0xFF bytes (NaN in float16 and bfloat16).
DeviceBuffer half_output_buffer(const Shape& shape);
// Checks the guards, copies `shape` 16-bit elements of `h` back and widens them to float32.
Tensor to_host_half(const DeviceBuffer& b, HalfType h, const Shape& shape, const std::string& what);

// One value copied back (a count written by a kernel or by CUB).
template <typename T> T read_scalar(const T* device_ptr) {
  T v{};
  PARITY_CUDA_CHECK(cudaMemcpy(&v, device_ptr, sizeof(T), cudaMemcpyDeviceToHost));
  return v;
}

// Throws parity::Error when the backend cannot run here (no GPU), naming the op.
void require_gpu(const char* op);

}  // namespace parity::cuda
