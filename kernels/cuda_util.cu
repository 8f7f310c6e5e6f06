#include "kernels/cuda_util.h"

#include <cstring>
#include <utility>

#include "core/error.h"
#include "core/gpu.h"

namespace parity::cuda {

void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  throw Error(std::string("CUDA ") + what + ": " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
}

void check_launch(const char* kernel) {
  check(cudaGetLastError(), kernel);
  check(cudaDeviceSynchronize(), kernel);
}

void require_gpu(const char* op) {
  const GpuStatus& s = gpu_status();
  if (!s.available) throw Error(std::string("cuda ") + op + ": " + s.reason);
}

DeviceBuffer::DeviceBuffer(size_t bytes, unsigned char data_fill) : bytes_(bytes) {
  PARITY_CUDA_CHECK(cudaMalloc(&base_, bytes + 2 * kGuardBytes));
  // Each byte written once: the guards with the sentinel, the data with data_fill.
  auto* p = static_cast<unsigned char*>(base_);
  cudaError_t fill = cudaMemset(p, kSentinel, kGuardBytes);
  if (fill == cudaSuccess && bytes > 0) fill = cudaMemset(p + kGuardBytes, data_fill, bytes);
  if (fill == cudaSuccess) fill = cudaMemset(p + kGuardBytes + bytes, kSentinel, kGuardBytes);
  if (fill != cudaSuccess) {
    cudaFree(base_);
    base_ = nullptr;
    check(fill, "cudaMemset(guards)");
  }
}

DeviceBuffer output_buffer(DType dtype, const Shape& shape) {
  return DeviceBuffer(size_t(shape.byte_size(dtype_size(dtype))), is_floating(dtype) ? DeviceBuffer::kUnwrittenFloat : DeviceBuffer::kSentinel);
}

DeviceBuffer::~DeviceBuffer() {
  if (base_) cudaFree(base_);  // errors ignored: a destructor must not throw
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept : base_(std::exchange(o.base_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (base_) cudaFree(base_);
    base_ = std::exchange(o.base_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::check_guards(const std::string& what) const {
  if (!base_) return;
  unsigned char head[kGuardBytes], tail[kGuardBytes];
  auto* base = static_cast<unsigned char*>(base_);
  PARITY_CUDA_CHECK(cudaMemcpy(head, base, kGuardBytes, cudaMemcpyDeviceToHost));
  PARITY_CUDA_CHECK(cudaMemcpy(tail, base + kGuardBytes + bytes_, kGuardBytes, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < kGuardBytes; ++i) {
    if (head[i] != kSentinel) throw Error(what + ": a kernel wrote " + std::to_string(kGuardBytes - i) + " bytes before its output");
    if (tail[i] != kSentinel) throw Error(what + ": a kernel wrote past the end of its output (byte " + std::to_string(i) + " after it)");
  }
}

DeviceBuffer to_device(const Tensor& t) {
  DeviceBuffer b(t.nbytes());
  if (t.nbytes()) PARITY_CUDA_CHECK(cudaMemcpy(b.data(), t.bytes(), t.nbytes(), cudaMemcpyHostToDevice));
  gpu_span_begin();  // the op's device time starts after its last input upload
  return b;
}

Tensor to_host(const DeviceBuffer& b, DType dtype, const Shape& shape, const std::string& what) {
  gpu_span_end();  // ...and ends before its first output download
  b.check_guards(what);
  Tensor t(dtype, shape);
  if (t.nbytes() > b.bytes()) throw Error(what + ": output buffer smaller than its shape " + shape.str());
  if (t.nbytes()) PARITY_CUDA_CHECK(cudaMemcpy(t.mutable_bytes(), b.data(), t.nbytes(), cudaMemcpyDeviceToHost));
  return t;
}

}  // namespace parity::cuda
