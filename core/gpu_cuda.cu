// gpu_status() for builds with the CUDA backend.
#include <cuda_runtime.h>

#include <cstdio>

#include "core/gpu.h"

namespace parity {

namespace {
GpuStatus query() {
  GpuStatus s;
  s.built = true;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    s.reason = std::string("no usable GPU: ") + cudaGetErrorString(err);
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

}  // namespace parity
