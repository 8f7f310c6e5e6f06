#include "kernels/cuda_util.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "core/error.h"
#include "core/gpu.h"

namespace parity::cuda {

void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  throw Error(std::string("CUDA ") + what + ": " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
}

void kernel_begin() { gpu_kernel_begin(); }

void check_launch(const char* kernel) {
  check(cudaGetLastError(), kernel);
  gpu_kernel_end();
  check(cudaDeviceSynchronize(), kernel);
}

void require_gpu(const char* op) {
  const GpuStatus& s = gpu_status();
  if (!s.available) throw Error(std::string("cuda ") + op + ": " + s.reason);
}

namespace {
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// Freed blocks by their allocated size (cudaMalloc's size: data plus both guards). Never freed
// at exit: the process's end returns the memory, and the CUDA runtime may be gone by then.
class BlockCache {
 public:
  static BlockCache& get() {
    static BlockCache* cache = new BlockCache;
    return *cache;
  }
  void* take(size_t bytes) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (enabled_) {
        const auto it = free_.find(bytes);
        if (it != free_.end()) {
          void* p = it->second;
          free_.erase(it);
          return p;
        }
      }
    }
    void* p = nullptr;
    cudaError_t status = cudaMalloc(&p, bytes);
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // not sticky: clear it before trying again
      empty();
      status = cudaMalloc(&p, bytes);
    }
    check(status, "cudaMalloc");
    return p;
  }
  void give(void* p, size_t bytes) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (enabled_) {
        free_.emplace(bytes, p);
        return;
      }
    }
    cudaFree(p);  // errors ignored: called from a destructor
  }

 private:
  BlockCache() {
    const char* off = std::getenv("PARITY_CUDA_NO_CACHE");
    enabled_ = !(off && *off && std::string(off) != "0");
  }
  void empty() {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [bytes, p] : free_) cudaFree(p);
    free_.clear();
  }
  std::mutex mutex_;
  std::multimap<size_t, void*> free_;
  bool enabled_ = true;
};
}  // namespace

DeviceBuffer::DeviceBuffer(size_t bytes, NoFill) : bytes_(bytes) {
  const auto t0 = Clock::now();
  base_ = BlockCache::get().take(bytes + 2 * kGuardBytes);
  auto* p = static_cast<unsigned char*>(base_);
  cudaError_t fill = cudaMemsetAsync(p, kSentinel, kGuardBytes);
  if (fill == cudaSuccess) fill = cudaMemsetAsync(p + kGuardBytes + bytes, kSentinel, kGuardBytes);
  gpu_costs().alloc_ms += ms_since(t0);
  if (fill != cudaSuccess) {
    release();
    check(fill, "cudaMemset(guards)");
  }
}

DeviceBuffer::DeviceBuffer(size_t bytes, unsigned char data_fill) : DeviceBuffer(bytes, NoFill{}) {
  if (bytes == 0) return;
  const auto t0 = Clock::now();
  const cudaError_t fill = cudaMemsetAsync(static_cast<unsigned char*>(base_) + kGuardBytes, data_fill, bytes);
  gpu_costs().alloc_ms += ms_since(t0);
  if (fill != cudaSuccess) {
    release();
    check(fill, "cudaMemset(data)");
  }
}

DeviceBuffer DeviceBuffer::uninitialised(size_t bytes) { return DeviceBuffer(bytes, NoFill{}); }

DeviceBuffer output_buffer(DType dtype, const Shape& shape) {
  return DeviceBuffer(size_t(shape.byte_size(dtype_size(dtype))), is_floating(dtype) ? DeviceBuffer::kUnwrittenFloat : DeviceBuffer::kSentinel);
}

void DeviceBuffer::release() {
  if (base_) BlockCache::get().give(std::exchange(base_, nullptr), bytes_ + 2 * kGuardBytes);
}

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept : base_(std::exchange(o.base_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    release();
    base_ = std::exchange(o.base_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::check_guards(const std::string& what) const {
  if (!base_) return;
  const auto t0 = Clock::now();
  unsigned char head[kGuardBytes], tail[kGuardBytes];
  auto* base = static_cast<unsigned char*>(base_);
  PARITY_CUDA_CHECK(cudaMemcpy(head, base, kGuardBytes, cudaMemcpyDeviceToHost));
  PARITY_CUDA_CHECK(cudaMemcpy(tail, base + kGuardBytes + bytes_, kGuardBytes, cudaMemcpyDeviceToHost));
  gpu_costs().guard_ms += ms_since(t0);
  for (size_t i = 0; i < kGuardBytes; ++i) {
    if (head[i] != kSentinel) throw Error(what + ": a kernel wrote " + std::to_string(kGuardBytes - i) + " bytes before its output");
    if (tail[i] != kSentinel) throw Error(what + ": a kernel wrote past the end of its output (byte " + std::to_string(i) + " after it)");
  }
}

DeviceBuffer to_device(const void* data, size_t bytes) {
  DeviceBuffer b = DeviceBuffer::uninitialised(bytes);  // the copy writes every byte
  const auto t0 = Clock::now();
  if (bytes) PARITY_CUDA_CHECK(cudaMemcpy(b.data(), data, bytes, cudaMemcpyHostToDevice));
  gpu_costs().transfer_ms += ms_since(t0);
  return b;
}

DeviceBuffer to_device(const Tensor& t) {
  DeviceBuffer b = to_device(t.bytes(), t.nbytes());
  gpu_span_begin();  // the op's device time starts after its last input upload
  return b;
}

Tensor to_host(const DeviceBuffer& b, DType dtype, const Shape& shape, const std::string& what) {
  gpu_span_end();  // ...and ends before its first output download
  b.check_guards(what);
  Tensor t(dtype, shape);
  if (t.nbytes() > b.bytes()) throw Error(what + ": output buffer smaller than its shape " + shape.str());
  const auto t0 = Clock::now();
  if (t.nbytes()) PARITY_CUDA_CHECK(cudaMemcpy(t.mutable_bytes(), b.data(), t.nbytes(), cudaMemcpyDeviceToHost));
  gpu_costs().transfer_ms += ms_since(t0);
  return t;
}

namespace {
uint16_t half_bits(float f, HalfType h) {
  if (h == HalfType::Fp16) return float_to_half(f).bits;
  const uint32_t u = float_bits(round_mantissa(f, 7));
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t(((u >> 16) & 0x8000u) | 0x7fc0u);  // a NaN stays one
  return uint16_t(u >> 16);  // bfloat16: float32's upper half
}
float widened(uint16_t bits, HalfType h) {
  if (h == HalfType::Fp16) return half_to_float(Half{bits});
  return bits_float(uint32_t(bits) << 16);
}
}  // namespace

DeviceBuffer to_device_half(const Tensor& t, HalfType h) {
  if (t.dtype() != DType::Float32 || h == HalfType::None) throw Error("cuda: only float32 tensors of a half call are packed to 16 bits");
  std::vector<uint16_t> packed(size_t(t.numel()));
  const float* v = t.data<float>();
  for (size_t i = 0; i < packed.size(); ++i) packed[i] = half_bits(v[i], h);
  DeviceBuffer b = to_device(packed.data(), packed.size() * sizeof(uint16_t));
  gpu_span_begin();
  return b;
}

DeviceBuffer half_output_buffer(const Shape& shape) {
  return DeviceBuffer(size_t(shape.numel()) * sizeof(uint16_t), DeviceBuffer::kUnwrittenFloat);
}

Tensor to_host_half(const DeviceBuffer& b, HalfType h, const Shape& shape, const std::string& what) {
  gpu_span_end();
  b.check_guards(what);
  const size_t n = size_t(shape.numel());
  if (n * sizeof(uint16_t) > b.bytes()) throw Error(what + ": output buffer smaller than its shape " + shape.str());
  std::vector<uint16_t> packed(n);
  const auto t0 = Clock::now();
  if (n) PARITY_CUDA_CHECK(cudaMemcpy(packed.data(), b.data(), n * sizeof(uint16_t), cudaMemcpyDeviceToHost));
  gpu_costs().transfer_ms += ms_since(t0);
  Tensor t(DType::Float32, shape);
  float* out = t.mutable_data<float>();
  for (size_t i = 0; i < n; ++i) out[i] = widened(packed[i], h);
  return t;
}

}  // namespace parity::cuda
