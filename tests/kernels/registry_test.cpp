// The registry: every op's line parses back to itself, runs by name on ref and aten, and refuses
// unknown names; cuda says why it cannot run here.
#include <gtest/gtest.h>

#include "kernel_test_util.h"

namespace parity {
namespace {

// One valid line per op, YOLOv5s shapes where the op appears in it.
const char* const kLines[] = {
    "conv2d x=1x3x64x64 w=32x3x6x6 bias stride=2 pad=2",
    "silu x=1x32x32x32",
    "add x=1x32x16x16",
    "cat x=1x16x8x8,1x16x8x8 dim=1",
    "maxpool2d x=1x32x20x20 k=5 stride=1 pad=2",
    "upsample_nearest2d x=1x16x10x10 scale=2",
    "sigmoid x=1x255x8x8",
    "detect_decode x=1x255x8x8 stride=8 anchors=10,13,16,30,33,23",
    "threshold x=1x100 value=0.001",
    "nonzero x=100x80",
    "index x=100x85 mask=100",
    "max_dim x=100x80 dim=1 keepdim",
    "argsort x=100 descending",
    "nms boxes=100x4 iou=0.6 batched",
};

TEST(Registry, EveryOpHasALineThatRunsOnRefAndAten) {
  ASSERT_EQ(op_names().size(), std::size(kLines));
  for (const char* line : kLines) {
    SCOPED_TRACE(line);
    EXPECT_EQ(canonical_line(line), line);
    const std::string op = op_name_of(line);
    for (const char* b : {"ref", "aten"}) {
      EXPECT_TRUE(backend(b).supports(op));
      std::vector<Tensor> in = test::seeded_inputs(line, 1, 0, 1);
      const std::vector<Tensor> out = backend(b).run(line, in);
      ASSERT_FALSE(out.empty());
      EXPECT_TRUE(out[0].defined());
    }
  }
}

TEST(Registry, UnknownNamesAreListed) {
  try {
    backend("tpu");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("known: ref aten cuda aten:cuda aten:cuda-nocudnn faulty:<defect>[:<n>]"), std::string::npos) << e.what();
  }
  try {
    backend("ref").run("conv3d x=1", {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown op 'conv3d'"), std::string::npos) << e.what();
  }
}

TEST(Registry, CudaSaysWhyItCannotRun) {
  const Backend& cuda = backend("cuda");
  if (cuda.unavailable_reason().empty()) GTEST_SKIP() << "a GPU is present";
  EXPECT_THROW(cuda.run(kLines[1], test::seeded_inputs(kLines[1], 1)), Error);
}

}  // namespace
}  // namespace parity
