// The trace importer on traces written here in Kineto's format (with and without "Concrete
// Inputs", plain and gzip), and on the real resnet50 trace in ../shared/traces when present.
#include "cases/trace_import.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <utility>
#include <vector>

#include "core/error.h"
#include "kernels/call.h"
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

// Any duration event: `args` is the JSON object's inside ("" for none).
std::string event(const std::string& cat, const std::string& name, int64_t ts, int64_t dur, int tid = 7,
                  const std::string& args = "") {
  return "{\"ph\": \"X\", \"cat\": \"" + cat + "\", \"name\": \"" + name + "\", \"pid\": 1, \"tid\": " + std::to_string(tid) +
         ", \"ts\": " + std::to_string(ts) + ", \"dur\": " + std::to_string(dur) + ", \"args\": {" + args + "}}";
}

// An aten::add_ (or aten::add) of two float tensors of shape `dims` ("[4, 3, 3, 3]").
std::string add_event(int64_t ts, const std::string& dims, int tid = 7, const std::string& name = "aten::add_") {
  return event("cpu_op", name, ts, 5, tid,
               "\"Input Dims\": [" + dims + ", " + dims + ", []], \"Input type\": [\"float\", \"float\", \"Scalar\"]");
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
  EXPECT_EQ(r.skipped.at({"aten::relu", "no case for this op"}), 1);
  // aten::convolution runs inside aten::conv2d, which became a case: not a call of its own.
  EXPECT_EQ(r.skipped.size(), 1u);
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

// A trace of a half-precision model (val.py's model.half(), autocast): its calls become the same
// float32 cases at that precision, which replay runs in that type; a call mixing float16 and
// bfloat16 inputs is none of them.
TEST(TraceImport, HalfPrecisionCallsBecomeCasesAtTheirPrecision) {
  const std::string conv = "[\"c10::Half\", \"c10::Half\", \"c10::Half\", \"ScalarList\", \"ScalarList\", \"ScalarList\", \"Int\"]";
  const std::string concrete = "[\"\", \"\", \"\", \"[1, 1]\", \"[1, 1]\", \"[1, 1]\", \"1\"]";
  const std::string text = trace_of({
      op_event("aten::conv2d", 100, 50, "[[1, 16, 40, 40], [32, 16, 3, 3], [32], [], [], [], []]", conv, concrete),
      op_event("aten::silu_", 160, 10, "[[1, 32, 40, 40]]", "[\"c10::Half\"]"),
      op_event("aten::sigmoid", 170, 10, "[[1, 32, 40, 40]]", "[\"c10::BFloat16\"]"),
      op_event("aten::add", 180, 5, "[[1, 32, 40, 40], [1, 32, 40, 40], []]", "[\"c10::Half\", \"c10::Half\", \"Scalar\"]"),
      op_event("aten::gt", 190, 1, "[[1, 6300], []]", "[\"c10::Half\", \"Scalar\"]", "[\"\", \"0.25\"]"),
      op_event("torchvision::nms", 200, 9, "[[300, 4], [300], []]", "[\"c10::Half\", \"c10::Half\", \"Double\"]",
               "[\"\", \"\", \"0.45\"]"),
      op_event("aten::nonzero", 210, 2, "[[1, 6300]]", "[\"c10::Half\"]"),
      op_event("aten::add", 220, 5, "[[1, 8], [1, 8], []]", "[\"c10::Half\", \"c10::BFloat16\", \"Scalar\"]"),
  });
  const TraceImport r = import_trace_text(text, "half.json", false);
  ASSERT_EQ(r.cases.size(), 7u);
  EXPECT_EQ(r.cases[0].line, "conv2d x=1x16x40x40 w=32x16x3x3 bias pad=1 precision=fp16");
  EXPECT_EQ(r.cases[1].line, "silu x=1x32x40x40 precision=fp16");
  EXPECT_EQ(r.cases[2].line, "sigmoid x=1x32x40x40 precision=bf16");
  EXPECT_EQ(r.cases[3].line, "add x=1x32x40x40 precision=fp16");
  EXPECT_EQ(r.cases[4].line, "threshold x=1x6300 value=0.25 precision=fp16");
  EXPECT_EQ(r.cases[5].line, "nms boxes=300x4 iou=0.45 precision=fp16");
  EXPECT_EQ(r.cases[6].line, "nonzero x=1x6300 dtype=float16");  // its own dtype, not a precision
  EXPECT_EQ(r.skipped.at({"aten::add", "not two tensors of one shape"}), 1);
  for (const Case& c : r.cases) {
    const Call call(c.line);  // each reads back as the call it names
    EXPECT_EQ(call.line(), c.line);
  }
}

TEST(TraceImport, RefusesWhatIsNotATrace) {
  test::TempDir dir;
  test::write_bytes(dir.file("x.json"), "{\"no\": \"events\"}");
  test::write_bytes(dir.file("y.json"), "not json at all");
  EXPECT_THROW(import_trace(dir.file("x.json"), false), Error);
  EXPECT_THROW(import_trace(dir.file("y.json"), false), Error);
  EXPECT_THROW(import_trace(dir.file("absent.json"), false), Error);
}

// One training step after another: the forward pass is imported, not the backward pass (on
// the main thread as on CPU, on autograd's thread as on CUDA), the optimiser, the DataLoader, or
// what runs after the backward began without a marker around it.
TEST(TraceImport, ImportsTheForwardPassOnly) {
  test::TempDir dir;
  const std::string conv_types = "\"Input type\": [\"float\", \"float\", \"\", \"GenericList\", \"GenericList\", \"GenericList\", \"Int\"]";
  auto conv = [&](int64_t ts, int64_t batch) {
    return event("cpu_op", "aten::conv2d", ts, 50, 7,
                 "\"Input Dims\": [[" + std::to_string(batch) + ", 3, 8, 8], [4, 3, 3, 3], [], [], [], [], []], " + conv_types);
  };
  test::write_bytes(
      dir.file("t.json"),
      trace_of({
          event("user_annotation", "ProfilerStep#1", 0, 1000),
          // zero_grad() before the forward must not end it.
          event("user_annotation", "Optimizer.zero_grad#SGD.zero_grad", 10, 10),
          event("cpu_op", "aten::zero_", 12, 2, 7, "\"Input Dims\": [[4, 3, 3, 3]], \"Input type\": [\"float\"]"),
          event("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 30, 20),
          event("cpu_op", "aten::cat", 32, 5, 7, "\"Input Dims\": [[[1, 3, 8, 8], [1, 3, 8, 8]], []], \"Input type\": [\"TensorList\", \"Int\"]"),
          conv(100, 2),
          add_event(160, "[2, 4, 8, 8]"),  // the residual add: forward
          // The backward on this thread (CPU) and on autograd's thread 9 (CUDA, PyTorch 1.9 names).
          event("cpu_op", "autograd::engine::evaluate_function: AddBackward0", 300, 50),
          add_event(310, "[2, 4, 7, 7]", 7, "aten::add"),
          event("Operator", "CudnnConvolutionBackward", 320, 20, 9, "\"Fwd thread id\": 7"),
          add_event(325, "[5, 5]", 9),
          event("Operator", "torch::autograd::AccumulateGrad", 345, 5, 9),
          add_event(346, "[4, 3, 3, 3]", 9),
          add_event(360, "[3, 3]", 9, "aten::add"),  // gradients summed between nodes: no marker
          event("user_annotation", "Optimizer.step#SGD.step", 400, 100),
          add_event(410, "[4, 3, 3, 3]"),
          add_event(420, "[4]"),
          add_event(600, "[6, 6]"),  // a hand-written update after the step: no marker either
          // The next step's forward is imported again (a new batch size, so a new case).
          event("user_annotation", "ProfilerStep#2", 1000, 1000),
          conv(1100, 1),
          add_event(1160, "[1, 4, 8, 8]"),
          event("user_annotation", "Optimizer.step#SGD.step", 1400, 100),
          add_event(1410, "[4, 3, 3, 3]"),
      }));
  const TraceImport r = import_trace(dir.file("t.json"), false);
  std::vector<std::string> lines;
  for (const Case& c : r.cases) lines.push_back(c.line);
  EXPECT_EQ(lines, (std::vector<std::string>{"conv2d x=2x3x8x8 w=4x3x3x3 pad=1", "add x=2x4x8x8", "conv2d x=1x3x8x8 w=4x3x3x3 pad=1",
                                             "add x=1x4x8x8"}));
  EXPECT_EQ(r.calls, 4);
  EXPECT_EQ(r.outside_forward, (std::map<std::string, int64_t>{
                                   {"backward", 3}, {"after the backward began", 2}, {"optimiser", 3}, {"data loading", 1}}));
  // Not forward, so not "skipped" either: the table lists only what the forward did.
  EXPECT_EQ(r.skipped.count({"aten::zero_", "no case for this op"}), 0u);

  // --all: every call, the optimiser's weight-shaped adds included.
  const TraceImport all = import_trace(dir.file("t.json"), true);
  EXPECT_EQ(all.cases.size(), 13u);
  EXPECT_EQ(std::count_if(all.cases.begin(), all.cases.end(), [](const Case& c) { return c.line == "add x=4x3x3x3"; }), 3);
  EXPECT_TRUE(all.outside_forward.empty());
}

// Eager models profiled with with_stack=True or with_modules=True: the Python tracer's
// "nn.Module: <class>_<n>" events around the calls name the cases.
TEST(TraceImport, NamesCasesByModule) {
  test::TempDir dir;
  const std::string conv_args =
      "\"Input type\": [\"float\", \"float\", \"float\", \"ScalarList\", \"ScalarList\", \"ScalarList\", \"Int\"], "
      "\"Concrete Inputs\": [\"\", \"\", \"\", \"[1, 1]\", \"[1, 1]\", \"[1, 1]\", \"1\"]";
  auto conv = [&](int64_t ts, const std::string& x) {
    return event("cpu_op", "aten::conv2d", ts, 40, 7, "\"Input Dims\": [" + x + ", [4, 3, 3, 3], [4], [], [], [], []], " + conv_args);
  };
  auto module = [](const std::string& name, int64_t ts, int64_t dur) { return event("python_function", "nn.Module: " + name, ts, dur); };
  test::write_bytes(dir.file("t.json"),
                    trace_of({
                        module("Net_0", 100, 300),
                        module("Conv2d_0", 110, 50),
                        conv(115, "[1, 3, 8, 8]"),
                        module("SiLU_0", 170, 20),
                        event("cpu_op", "aten::silu", 175, 10, 7, "\"Input Dims\": [[1, 4, 8, 8]], \"Input type\": [\"float\"]"),
                        add_event(200, "[1, 4, 8, 8]", 7, "aten::add"),  // in Net_0's own forward
                        add_event(210, "[1, 4, 4, 4]", 7, "aten::add"),  // a second and a third there
                        add_event(220, "[1, 4, 2, 2]", 7, "aten::add"),
                        module("Conv2d_1", 240, 50),
                        conv(245, "[1, 3, 16, 16]"),
                        event("cpu_op", "aten::sigmoid", 500, 5, 7, "\"Input Dims\": [[1, 4]], \"Input type\": [\"float\"]"),
                        // After the optimiser's step, a validation forward: in a module, so imported.
                        event("user_annotation", "Optimizer.step#SGD.step", 600, 50),
                        add_event(700, "[9, 9]"),  // outside any module after the step: not
                        module("Net_0", 800, 100),
                        module("Conv2d_0", 810, 50),
                        conv(815, "[2, 3, 8, 8]"),
                    }));
  const TraceImport r = import_trace(dir.file("t.json"), false);
  std::vector<std::pair<std::string, std::string>> got;
  for (const Case& c : r.cases) got.emplace_back(c.name, c.line);
  const std::vector<std::pair<std::string, std::string>> want = {
      {"Net_0.Conv2d_0", "conv2d x=1x3x8x8 w=4x3x3x3 bias pad=1"},
      {"Net_0.SiLU_0", "silu x=1x4x8x8"},
      {"Net_0", "add x=1x4x8x8"},
      {"Net_0.add", "add x=1x4x4x4"},
      {"Net_0.add.2", "add x=1x4x2x2"},
      {"Net_0.Conv2d_1", "conv2d x=1x3x16x16 w=4x3x3x3 bias pad=1"},
      {"trace.6.sigmoid", "sigmoid x=1x4"},  // no module around it
      {"Net_0.Conv2d_0.conv2d", "conv2d x=2x3x8x8 w=4x3x3x3 bias pad=1"},
  };
  EXPECT_EQ(got, want);
  EXPECT_TRUE(r.module_names);
  EXPECT_EQ(r.outside_forward.at("after the backward began"), 1);
}

// A TorchScript model profiled with with_modules=True: each op's "Module Hierarchy" argument.
TEST(TraceImport, NamesCasesByTorchScriptModuleHierarchy) {
  test::TempDir dir;
  auto silu = [](int64_t ts, const std::string& dims, const std::string& hierarchy) {
    return event("cpu_op", "aten::silu", ts, 5, 7,
                 "\"Input Dims\": [" + dims + "], \"Input type\": [\"float\"], \"Module Hierarchy\": \"" + hierarchy + "\"");
  };
  test::write_bytes(dir.file("t.json"), trace_of({
                                            silu(10, "[1, 8]", "TOP(Net)::forward.layer1(Sequential)::forward.0(SiLU)::forward."),
                                            silu(20, "[2, 8]", "TOP(Net)::forward.SELF(Net)::helper."),
                                            silu(30, "[3, 8]", "TOP(Net)::forward.head(Head)::forward.SELF(Head)::act."),
                                        }));
  const TraceImport r = import_trace(dir.file("t.json"), false);
  ASSERT_EQ(r.cases.size(), 3u);
  EXPECT_EQ(r.cases[0].name, "layer1.0");
  EXPECT_EQ(r.cases[1].name, "Net");  // the model's own forward
  EXPECT_EQ(r.cases[2].name, "head");
}

TEST(TraceImport, SkippedTableIsShortAndSorted) {
  TraceImport r;
  EXPECT_EQ(skipped_table(r), "");
  r.skipped[{"aten::relu_", "no case for this op"}] = 294;
  r.skipped[{"aten::batch_norm", "no case for this op"}] = 318;
  r.skipped[{"aten::max_pool2d", "kernel size not recorded"}] = 6;
  r.skipped[{"aten::to", "no case for this op"}] = 12;
  EXPECT_EQ(skipped_table(r, 3),
            "  op                calls  why skipped\n"
            "  aten::batch_norm    318  no case for this op\n"
            "  aten::relu_         294  no case for this op\n"
            "  aten::to             12  no case for this op\n"
            "  ... 1 more rows, 6 calls\n");
}

// The resnet50 training trace (PyTorch 1.9, dims only, no module events): every forward conv2d
// of torchvision's resnet50 with its input and weight shapes, stride recovered from the layer
// after it; the optimiser's and the backward's adds (shaped like the weights) left out.
TEST(TraceImport, RealResnet50Trace) {
  const std::string path = std::string(PARITY_SOURCE_DIR) + "/../shared/traces/resnet50_pytorch1.9_kineto.pt.trace.json.gz";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is not here";
  const TraceImport r = import_trace(path, false);
  std::vector<std::string> convs, adds;
  for (const Case& c : r.cases) {
    if (c.line.rfind("conv2d", 0) == 0) convs.push_back(c.line);
    if (c.line.rfind("add", 0) == 0) adds.push_back(c.line);
    EXPECT_EQ(c.name.rfind("trace.", 0), 0u) << c.name;
  }
  // 53 convolutions per forward, 23 distinct (the repeated bottleneck blocks share shapes).
  EXPECT_EQ(convs.size(), 23u);
  EXPECT_EQ(convs.front(), "conv2d x=32x3x224x224 w=64x3x7x7 stride=2 pad=3");
  EXPECT_NE(std::find(convs.begin(), convs.end(), "conv2d x=32x1024x14x14 w=2048x1024x1x1 stride=2"), convs.end());
  for (const auto& [key, n] : r.skipped) EXPECT_NE(key.first, "aten::conv2d") << key.second << ": " << n;
  // The adds left are the bottlenecks' residual adds, one per stage, on batch-32 activations;
  // none is shaped like a weight (64x3x7x7) or a bias.
  EXPECT_EQ(adds, (std::vector<std::string>{"add x=32x256x56x56", "add x=32x512x28x28", "add x=32x1024x14x14", "add x=32x2048x7x7"}));
  EXPECT_EQ(r.cases.size(), 27u);
  // SGD updates 161 parameters with two add_ each, and AccumulateGrad adds each gradient, six
  // steps over; the backward thread sums 16 gradients per step with bare aten::add.
  EXPECT_EQ(r.outside_forward.at("optimiser"), 6 * 161 * 2);
  EXPECT_EQ(r.outside_forward.at("backward"), 6 * 161);
  EXPECT_EQ(r.outside_forward.at("after the backward began"), 6 * 16);
  // Every call: 53 convs per forward, 6 profiled steps; the weight-shaped adds come back.
  const TraceImport all = import_trace(path, true);
  int64_t calls = 0;
  for (const Case& c : all.cases) calls += c.line.rfind("conv2d", 0) == 0;
  EXPECT_EQ(calls, 6 * 53);
  EXPECT_TRUE(std::any_of(all.cases.begin(), all.cases.end(), [](const Case& c) { return c.line == "add x=64x3x7x7"; }));
}

}  // namespace
}  // namespace parity
