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

// The device time of one op without its transfers, for `parity bench`: CUDA events on the
// default stream, from its last input upload (every upload calls gpu_span_begin, the last one
// wins) to its first output download (gpu_span_end). Per thread. gpu_span_ms() waits for the
// end event and returns NaN when no begin/end pair was recorded since gpu_span_reset() (the op
// did not run on the GPU, or this build has no CUDA).
void gpu_span_reset();
void gpu_span_begin();
void gpu_span_end();
double gpu_span_ms();

}  // namespace parity
