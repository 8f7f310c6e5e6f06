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

// What one op of the project's CUDA backend cost, per thread, summed since gpu_costs_reset(), for
// `parity bench` to report the kernels apart from the harness around them.
//   kernel_ms: GPU time between CUDA events recorded just before and just after each launch
//              (cuda_util.h's kernel_begin/check_launch); `launches` counts them;
//   alloc_ms, transfer_ms, guard_ms: host time spent getting device memory (and enqueueing its
//              fills), copying to and from the device, and checking guard bytes.
// The rest of a run's wall time is the fills' and launches' own time and the synchronisations.
struct GpuCosts {
  double kernel_ms = 0, alloc_ms = 0, transfer_ms = 0, guard_ms = 0;
  int launches = 0;
};
void gpu_costs_reset();
GpuCosts& gpu_costs();
// An event before a launch, and after it: gpu_kernel_end() waits for the second and adds the
// time between them to gpu_costs().kernel_ms. Does nothing off the GPU or without a begin.
void gpu_kernel_begin();
void gpu_kernel_end();

// The anchor for memory-bound kernels: the median GPU time of a device-to-device copy that reads
// bytes/2 and writes bytes/2 (cudaMemcpy, the device's own copy), over `repeat` copies after one
// warm-up. NaN off the GPU or when the memory cannot be had.
double gpu_copy_ms(double bytes, int repeat);

}  // namespace parity
