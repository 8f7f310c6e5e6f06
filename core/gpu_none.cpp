// gpu_status() for builds without the CUDA backend.
#include "core/gpu.h"

namespace parity {

const GpuStatus& gpu_status() {
  static const GpuStatus status{false, false, "",
                                "parity was built without CUDA (no nvcc found, or PARITY_CUDA=OFF)"};
  return status;
}

}  // namespace parity
