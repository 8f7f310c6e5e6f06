// The YOLOv5 v7.0 op lists: per forward 3 maxpool2d and 2 upsamples for every variant; 60
// conv2d and 57 SiLU for n and s. Deeper variants have more C3 bottlenecks, each two Convs:
// conv2d = 38 + 2 * (total bottlenecks), 11 for n/s, 22 for m, 33 for l, 44 for x; every conv
// but Detect's three is followed by a SiLU. And the parameter counts of the fused models as
// YOLOv5 reports them ("Model summary: ... parameters" after fuse), summed here from the conv
// weight and bias shapes.
#include <gtest/gtest.h>

#include <map>

#include "cases/yolov5.h"
#include "core/error.h"
#include "kernels/backend.h"
#include "kernels/conv2d/conv2d.h"

namespace parity {
namespace {

TEST(Yolov5, OpCountsAndParameterTotals) {
  struct Expected {
    const char* name;
    int convs;
    int64_t params;
  };
  const Expected variants[] = {{"yolov5n", 60, 1867405},
                               {"yolov5s", 60, 7225885},
                               {"yolov5m", 82, 21172173},
                               {"yolov5l", 104, 46533693},
                               {"yolov5x", 126, 86705005}};
  for (const auto& [name, convs, expected] : variants) {
    SCOPED_TRACE(name);
    std::map<std::string, int> count;
    int64_t total = 0;
    for (const Case& c : yolov5_forward(yolov5_variant(name), 640, 1)) {
      const std::string op = op_name_of(c.line);
      ++count[op];
      EXPECT_EQ(canonical_line(c.line), c.line);  // every line is valid and canonical
      if (op == "conv2d") {
        const Conv2dParams p = Conv2dParams::parse(c.line);
        total += p.w.numel() + (p.bias ? p.w[0] : 0);
      }
    }
    EXPECT_EQ(count["conv2d"], convs);
    EXPECT_EQ(count["silu"], convs - 3);
    EXPECT_EQ(count["maxpool2d"], 3);
    EXPECT_EQ(count["upsample_nearest2d"], 2);
    EXPECT_EQ(count["detect_decode"], 3);
    EXPECT_EQ(total, expected);
  }
}

TEST(Yolov5, ShapesFollowImageSizeAndBatch) {
  const auto cases = yolov5_forward(yolov5_variant("yolov5s"), 640, 32);
  EXPECT_EQ(cases.front().name, "model.0.conv");
  EXPECT_EQ(cases.front().line, "conv2d x=32x3x640x640 w=32x3x6x6 bias stride=2 pad=2");
  EXPECT_EQ(cases.back().name, "model.24");
  EXPECT_EQ(cases.back().line, "cat x=32x19200x85,32x4800x85,32x1200x85 dim=1");  // 25200 predictions
  const auto small = yolov5_forward(yolov5_variant("yolov5n"), 128, 1);
  EXPECT_EQ(small.back().line, "cat x=1x768x85,1x192x85,1x48x85 dim=1");
  // Names are unique, so a dump can hold one tensor per name.
  std::map<std::string, int> seen;
  for (const auto& c : cases) EXPECT_EQ(++seen[c.name], 1) << c.name;
  EXPECT_THROW(yolov5_forward(yolov5_variant("yolov5s"), 100, 1), Error);
  EXPECT_THROW(yolov5_variant("yolov6s"), Error);
}

}  // namespace
}  // namespace parity
