#pragma once
// Timing of op cases on two backends in the same run, for `parity bench`.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cases/yolov5.h"

namespace parity {

struct BenchOptions {
  std::string backend_a = "ref", backend_b = "aten";
  int warmup = 1;  // untimed runs per case and backend
  int repeat = 3;  // timed runs; the median is reported
  uint64_t seed = 0;
};

// One backend's times for one case, each the median over the timed runs.
struct BenchTiming {
  double wall_ms = 0;  // one whole run, as a caller sees it
  // GPU backends only (NaN otherwise): the GPU time of the op's kernels alone. The project's CUDA
  // backend brackets each launch with CUDA events (cuda_util.h); LibTorch's is timed from its last
  // input upload to its first output download, its caching allocator's work and launches inside.
  double kernel_ms = 0;
  // The project's CUDA backend only (0 elsewhere): host time of the harness around its kernels,
  // gpu.h's GpuCosts. What the wall time holds beyond these and the kernels is the fills of fresh
  // outputs (NaN, so an unwritten element fails), launch latency and synchronisation.
  double alloc_ms = 0, transfer_ms = 0, guard_ms = 0;
};

struct BenchRow {
  std::string name, line;
  BenchTiming a, b;
  double flops = 0;  // conv2d: 2 x multiply-adds; 0 for other ops
  double bytes = 0;  // inputs read once plus outputs written once
  // When a backend runs on the GPU: a device-to-device copy moving `bytes` (gpu.h's
  // gpu_copy_ms), the floor of a memory-bound op, measured in the same run. NaN otherwise.
  double copy_ms = 0;
};

// Runs every case on both backends with the same seeded inputs (runners/inputs.h). A run is
// backend().run(): parameter parsing, the op, its output allocation and, on a GPU backend, the
// host-device copies, as a caller sees it; the kernels are timed apart with CUDA events.
// Backend A times every case, then backend B. `progress(i, n)` is called before each of the
// n = 2 * cases timings.
std::vector<BenchRow> bench_cases(const std::vector<Case>& cases, const BenchOptions& o,
                                  const std::function<void(size_t, size_t)>& progress = nullptr);

}  // namespace parity
