#include "core/gpu.h"

#include <gtest/gtest.h>

namespace parity {
namespace {

// The status is self-consistent on every machine: a device name exactly when available, a
// reason exactly when not, and never available in a build without CUDA.
TEST(GpuStatus, ConsistentOnThisMachine) {
  const GpuStatus& s = gpu_status();
  EXPECT_EQ(s.available, !s.device.empty());
  EXPECT_EQ(s.available, s.reason.empty());
  if (!s.built) {
    EXPECT_FALSE(s.available);
  }
#ifdef PARITY_HAVE_CUDA
  EXPECT_TRUE(s.built);
#else
  EXPECT_FALSE(s.built);
#endif
  std::cout << "GPU: " << (s.available ? s.device : s.reason) << "\n";
}

}  // namespace
}  // namespace parity
