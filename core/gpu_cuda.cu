// gpu_status() for builds with the CUDA backend.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/gpu.h"

namespace parity {

namespace {
GpuStatus query() {
  GpuStatus s;
  s.built = true;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    // Without an NVIDIA driver, CUDA says "CUDA driver version is insufficient for CUDA runtime
    // version", which reads as "upgrade your driver" on a machine that has no GPU at all.
    s.reason = err == cudaErrorInsufficientDriver || err == cudaErrorNoDevice
                   ? std::string("no NVIDIA GPU or driver found")
                   : std::string("no usable GPU: ") + cudaGetErrorString(err);
    cudaGetLastError();  // clear the sticky error so later CUDA calls start clean
    return s;
  }
  if (count == 0) {
    s.reason = "no CUDA device found";
    return s;
  }
  cudaDeviceProp prop{};
  const cudaError_t perr = cudaGetDeviceProperties(&prop, 0);
  if (perr != cudaSuccess) {
    s.reason = std::string("cannot query device 0: ") + cudaGetErrorString(perr);
    return s;
  }
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s (sm_%d%d, %.1f GiB)", prop.name, prop.major, prop.minor,
                double(prop.totalGlobalMem) / double(1ull << 30));
  s.available = true;
  s.device = buf;
  return s;
}
}  // namespace

const GpuStatus& gpu_status() {
  static const GpuStatus status = query();
  return status;
}

namespace {
// Events made on a thread's first span and kept for the thread's life (a few per process).
struct Span {
  cudaEvent_t begin = nullptr, end = nullptr;
  enum { kNone, kBegun, kEnded } state = kNone;
  bool ready() {
    if (begin) return true;
    return cudaEventCreate(&begin) == cudaSuccess && cudaEventCreate(&end) == cudaSuccess;
  }
};
thread_local Span span, kernel;
thread_local GpuCosts costs;
}  // namespace

void gpu_span_reset() { span.state = Span::kNone; }

void gpu_span_begin() {
  if (gpu_status().available && span.ready() && cudaEventRecord(span.begin) == cudaSuccess) span.state = Span::kBegun;
}

void gpu_span_end() {
  if (span.state == Span::kBegun && cudaEventRecord(span.end) == cudaSuccess) span.state = Span::kEnded;
}

double gpu_span_ms() {
  float ms = 0;
  if (span.state != Span::kEnded || cudaEventSynchronize(span.end) != cudaSuccess ||
      cudaEventElapsedTime(&ms, span.begin, span.end) != cudaSuccess) {
    cudaGetLastError();
    return std::nan("");
  }
  return ms;
}

void gpu_costs_reset() { costs = GpuCosts{}; }
GpuCosts& gpu_costs() { return costs; }

void gpu_kernel_begin() {
  if (gpu_status().available && kernel.ready() && cudaEventRecord(kernel.begin) == cudaSuccess) kernel.state = Span::kBegun;
}

void gpu_kernel_end() {
  if (kernel.state != Span::kBegun) return;
  kernel.state = Span::kNone;
  float ms = 0;
  // A failed launch leaves its error for check_launch to report: nothing is cleared here.
  if (cudaEventRecord(kernel.end) == cudaSuccess && cudaEventSynchronize(kernel.end) == cudaSuccess &&
      cudaEventElapsedTime(&ms, kernel.begin, kernel.end) == cudaSuccess) {
    costs.kernel_ms += ms;
    ++costs.launches;
  }
}

double gpu_copy_ms(double bytes, int repeat) {
  const size_t half = size_t(bytes / 2) / 16 * 16;
  if (!gpu_status().available || half == 0 || repeat < 1) return std::nan("");
  void *src = nullptr, *dst = nullptr;
  cudaEvent_t begin = nullptr, end = nullptr;
  std::vector<float> times;
  if (cudaMalloc(&src, half) == cudaSuccess && cudaMalloc(&dst, half) == cudaSuccess && cudaMemset(src, 1, half) == cudaSuccess &&
      cudaEventCreate(&begin) == cudaSuccess && cudaEventCreate(&end) == cudaSuccess &&
      cudaMemcpy(dst, src, half, cudaMemcpyDeviceToDevice) == cudaSuccess) {
    for (int i = 0; i < repeat; ++i) {
      float ms = 0;
      if (cudaEventRecord(begin) != cudaSuccess || cudaMemcpyAsync(dst, src, half, cudaMemcpyDeviceToDevice) != cudaSuccess ||
          cudaEventRecord(end) != cudaSuccess || cudaEventSynchronize(end) != cudaSuccess ||
          cudaEventElapsedTime(&ms, begin, end) != cudaSuccess) {
        times.clear();
        break;
      }
      times.push_back(ms);
    }
  }
  cudaGetLastError();  // an allocation that failed is not the caller's error
  for (void* p : {src, dst}) {
    if (p) cudaFree(p);
  }
  for (cudaEvent_t e : {begin, end}) {
    if (e) cudaEventDestroy(e);
  }
  if (times.empty()) return std::nan("");
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace parity
