// gpu_status() for builds without the CUDA backend.
#include "core/gpu.h"

#include <cmath>

namespace parity {

const GpuStatus& gpu_status() {
  static const GpuStatus status{false, false, "",
                                "parity was built without CUDA (no nvcc found, or PARITY_CUDA=OFF)"};
  return status;
}

void gpu_span_reset() {}
void gpu_span_begin() {}
void gpu_span_end() {}
double gpu_span_ms() { return std::nan(""); }

namespace {
thread_local GpuCosts costs;
}  // namespace
void gpu_costs_reset() { costs = GpuCosts{}; }
GpuCosts& gpu_costs() { return costs; }
void gpu_kernel_begin() {}
void gpu_kernel_end() {}
double gpu_copy_ms(double, int) { return std::nan(""); }

}  // namespace parity
