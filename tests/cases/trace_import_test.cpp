// The trace importer on traces written here in Kineto's format (with and without "Concrete
// Inputs", plain and gzip), and on the real resnet50 trace in ../shared/traces when present.
#include "cases/trace_import.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "support/test_support.h"

namespace parity {
namespace {

std::string op_event(const std::string& name, int64_t ts, int64_t dur, const std::string& dims, const std::string& types,
                     const std::string& concrete = "") {
  std::string args = "\"Input Dims\": " + dims + ", \"Input type\": " + types;
  if (!concrete.empty()) args += ", \"Concrete Inputs\": " + concrete;
  return "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"" + name + "\", \"pid\": 1, \"tid\": 7, \"ts\": " +
         std::to_string(ts) + ", \"dur\": " + std::to_string(dur) + ", \"args\": {" + args + "}}";
}

std::string trace_of(const std::vector<std::string>& events) {
  std::string s = "{\"schemaVersion\": 1, \"traceEvents\": [";
  for (size_t i = 0; i < events.size(); ++i) s += (i ? ",\n" : "\n") + events[i];
  return s + "]}";
}

TEST(TraceImport, ReadsConcreteInputsOfANewerTrace) {
  test::TempDir dir;
  const std::string f = "[\"float\", \"float\", \"float\", \"ScalarList\", \"ScalarList\", \"ScalarList\", \"Int\"]";
  test::write_bytes(dir.file("t.json"),
                    trace_of({
                        op_event("aten::conv2d", 100, 50, "[[1, 3, 640, 640], [32, 3, 6, 6], [32], [], [], [], []]", f,
                                 "[\"\", \"\", \"\", \"[2, 2]\", \"[2, 2]\", \"[1, 1]\", \"1\"]"),
                        op_event("aten::convolution", 101, 48, "[[1, 3, 640, 640], [32, 3, 6, 6], [32]]", f),
                        op_event("aten::silu", 160, 10, "[[1, 32, 320, 320]]", "[\"float\"]"),
                        op_event("aten::cat", 200, 5, "[[[1, 64, 40, 40], [1, 64, 40, 40]], []]", "[\"TensorList\", \"Int\"]",
                                 "[\"\", \"1\"]"),
                        op_event("aten::max_pool2d", 210, 5, "[[1, 256, 20, 20], [], [], [], [], []]",
                                 "[\"float\", \"ScalarList\", \"ScalarList\", \"ScalarList\", \"ScalarList\", \"Bool\"]",
                                 "[\"\", \"[5, 5]\", \"[1, 1]\", \"[2, 2]\", \"[1, 1]\", \"False\"]"),
                        op_event("aten::gt", 220, 1, "[[1, 25200], []]", "[\"float\", \"Scalar\"]", "[\"\", \"0.001\"]"),
                        op_event("torchvision::nms", 230, 9, "[[4032, 4], [4032], []]", "[\"float\", \"float\", \"Double\"]",
                                 "[\"\", \"\", \"0.6\"]"),
                        op_event("aten::silu", 300, 10, "[[1, 32, 320, 320]]", "[\"float\"]"),  // a duplicate
                        op_event("aten::relu", 310, 10, "[[1, 32, 320, 320]]", "[\"float\"]"),
                    }));
  const TraceImport r = import_trace(dir.file("t.json"), false);
  ASSERT_EQ(r.cases.size(), 6u);
  EXPECT_EQ(r.cases[0].line, "conv2d x=1x3x640x640 w=32x3x6x6 bias stride=2 pad=2");
  EXPECT_FALSE(r.cases[0].inferred);
  EXPECT_EQ(r.cases[0].name, "trace.0.conv2d");
  EXPECT_EQ(r.cases[1].line, "silu x=1x32x320x320");
  EXPECT_EQ(r.cases[2].line, "cat x=1x64x40x40,1x64x40x40 dim=1");
  EXPECT_EQ(r.cases[3].line, "maxpool2d x=1x256x20x20 k=5 stride=1 pad=2");
  EXPECT_EQ(r.cases[4].line, "threshold x=1x25200 value=0.001");
  EXPECT_EQ(r.cases[5].line, "nms boxes=4032x4 iou=0.6");
  EXPECT_EQ(r.duplicates, 1);
  EXPECT_EQ(r.operator_events, 9);
  EXPECT_EQ(r.skipped.at("aten::relu"), 1);
  EXPECT_EQ(r.skipped.at("aten::convolution"), 1);
  EXPECT_EQ(import_trace(dir.file("t.json"), true).cases.size(), 7u);  // --all keeps the duplicate
}

TEST(TraceImport, InfersStrideAndPaddingFromTheNextLayerAndReadsGzip) {
  test::TempDir dir;
  const std::string f = "[\"float\", \"float\", \"\", \"GenericList\", \"GenericList\", \"GenericList\", \"Int\"]";
  const std::string text = trace_of({
      op_event("aten::conv2d", 100, 50, "[[8, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], []]", f),
      op_event("aten::batch_norm", 160, 10, "[[8, 64, 112, 112], [64], [64]]", "[\"float\", \"float\", \"float\"]"),
      op_event("aten::conv2d", 200, 50, "[[8, 64, 56, 56], [64, 64, 3, 3], [], [], [], [], []]", f),  // no next layer
      op_event("aten::cat", 300, 5, "[[[2, 3, 5], [2, 4, 5]], []]", "[\"TensorList\", \"Int\"]"),
  });
  gzFile gz = gzopen(dir.file("t.json.gz").c_str(), "wb");
  ASSERT_TRUE(gz);
  ASSERT_EQ(gzwrite(gz, text.data(), unsigned(text.size())), int(text.size()));
  gzclose(gz);
  const TraceImport r = import_trace(dir.file("t.json.gz"), false);
  ASSERT_EQ(r.cases.size(), 3u);
  EXPECT_EQ(r.cases[0].line, "conv2d x=8x3x224x224 w=64x3x7x7 stride=2 pad=3");
  EXPECT_TRUE(r.cases[0].inferred);
  EXPECT_EQ(r.cases[1].line, "conv2d x=8x64x56x56 w=64x64x3x3 pad=1");  // stride 1 and k//2 padding assumed
  EXPECT_TRUE(r.cases[1].inferred);
  EXPECT_EQ(r.cases[2].line, "cat x=2x3x5,2x4x5 dim=1");
  EXPECT_TRUE(r.cases[2].inferred);
}

TEST(TraceImport, RefusesWhatIsNotATrace) {
  test::TempDir dir;
  test::write_bytes(dir.file("x.json"), "{\"no\": \"events\"}");
  test::write_bytes(dir.file("y.json"), "not json at all");
  EXPECT_THROW(import_trace(dir.file("x.json"), false), Error);
  EXPECT_THROW(import_trace(dir.file("y.json"), false), Error);
  EXPECT_THROW(import_trace(dir.file("absent.json"), false), Error);
}

// The resnet50 training trace (PyTorch 1.9, dims only): every forward conv2d of torchvision's
// resnet50 with its input and weight shapes, stride recovered from the layer after it.
TEST(TraceImport, RealResnet50Trace) {
  const std::string path = std::string(PARITY_SOURCE_DIR) + "/../shared/traces/resnet50_pytorch1.9_kineto.pt.trace.json.gz";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is not here";
  const TraceImport r = import_trace(path, false);
  std::vector<std::string> convs;
  for (const Case& c : r.cases) {
    if (c.line.rfind("conv2d", 0) == 0) convs.push_back(c.line);
  }
  // 53 convolutions per forward, 23 distinct (the repeated bottleneck blocks share shapes).
  EXPECT_EQ(convs.size(), 23u);
  EXPECT_EQ(convs.front(), "conv2d x=32x3x224x224 w=64x3x7x7 stride=2 pad=3");
  EXPECT_NE(std::find(convs.begin(), convs.end(), "conv2d x=32x1024x14x14 w=2048x1024x1x1 stride=2"), convs.end());
  for (const auto& [name, n] : r.skipped) EXPECT_NE(name.rfind("aten::conv2d", 0), 0u) << name << " skipped " << n;
  // Every call: 53 per forward, 6 profiled steps.
  int64_t calls = 0;
  for (const Case& c : import_trace(path, true).cases) calls += c.line.rfind("conv2d", 0) == 0;
  EXPECT_EQ(calls, 6 * 53);
}

}  // namespace
}  // namespace parity
