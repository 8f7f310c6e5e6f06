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

struct BenchRow {
  std::string name, line;
  double ms_a = 0, ms_b = 0;  // median wall time of one run
  // Median device time of one run without its transfers (GPU backends; NaN otherwise).
  double device_ms_a = 0, device_ms_b = 0;
  double flops = 0;  // conv2d: 2 x multiply-adds; 0 for other ops
  double bytes = 0;  // inputs read once plus outputs written once
};

// Runs every case on both backends with the same seeded inputs (runners/inputs.h). A run is
// backend().run(): parameter parsing, the op, its output allocation and, on a GPU backend, the
// host-device copies, as a caller sees it; the device time is timed apart with CUDA events.
// Backend A times every case, then backend B. `progress(i, n)` is called before each of the
// n = 2 * cases timings.
std::vector<BenchRow> bench_cases(const std::vector<Case>& cases, const BenchOptions& o,
                                  const std::function<void(size_t, size_t)>& progress = nullptr);

}  // namespace parity
