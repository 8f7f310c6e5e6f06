#pragma once
// Whether the CUDA backend can run here, and why not when it cannot. GPU tests and commands use
// the reason as their SKIPPED message. Host-only header: no CUDA types leak out of core.
#include <string>

namespace parity {

struct GpuStatus {
  bool built = false;      // parity was compiled with the CUDA backend
  bool available = false;  // ...and a usable device is present
  std::string device;      // "NVIDIA H100 80GB HBM3 (sm_90, 79.1 GiB)" when available
  std::string reason;      // why not available; empty when available
};

// Queried once per process (the CUDA runtime's first call is slow), then cached.
const GpuStatus& gpu_status();

}  // namespace parity
