// Trusting the judge in the regime users live in: two correct implementations whose every layer
// differs by rounding (LibTorch against the float64-accumulating reference), with a defect on
// either side. For every defect kind at an early, a middle and a late layer (post-processing
// included), compare must fail and bisect must name exactly the defective layer and the
// defective side, with A and B either way round; two correct backends must pass.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>

#include "cases/yolov5.h"
#include "compare/dump_compare.h"
#include "kernels/backend.h"
#include "kernels/conv2d/conv2d.h"
#include "runners/dump.h"
#include "runners/model_run.h"
#include "support/test_support.h"

namespace parity {
namespace {

class Faulty : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { dir_ = new test::TempDir(); }
  static void TearDownTestSuite() { delete dir_; }

  // A dump of `model` at 192x192 on `backend_name`, made once per test binary.
  static std::string dump_of(const std::string& backend_name, const std::string& model = "yolov5n", uint64_t seed = 0) {
    const std::string folder = model + "-" + backend_name + "-" + std::to_string(seed);
    if (!made_.count(folder)) {
      RunOptions o;
      o.model = model, o.img = 192, o.backend = backend_name, o.seed = seed;
      o.dump_dir = dir_->file(folder);
      run_model(o);
      made_.insert(folder);
    }
    return dir_->file(folder);
  }

  // The name of the n-th forward layer (1-based; n < 0 counts from the end) for which `pick` holds.
  static std::string nth_layer(int n, const std::function<bool(const Case&)>& pick, const std::string& model = "yolov5n") {
    std::vector<std::string> names;
    for (const Case& c : yolov5_forward(yolov5_variant(model), 192, 1)) {
      if (pick(c)) names.push_back(c.name);
    }
    const int i = n > 0 ? n - 1 : int(names.size()) + n;
    return i >= 0 && i < int(names.size()) ? names[size_t(i)] : "";
  }
  static int count_layers(const std::function<bool(const Case&)>& pick, const std::string& model = "yolov5n") {
    int k = 0;
    for (const Case& c : yolov5_forward(yolov5_variant(model), 192, 1)) k += pick(c);
    return k;
  }

  static CompareResult compare(const std::string& a, const std::string& b) {
    return compare_dumps(read_dump(a), read_dump(b), CompareOptions{});
  }

  // compare(A, B) names `layer` as the one origin with `side` defective; every later failing
  // layer is propagated from it.
  static void expect_origin(const CompareResult& r, const std::string& layer, Sides side) {
    ASSERT_GE(r.origin, 0) << "no origin";
    const LayerReport& o = r.layers[size_t(r.origin)];
    EXPECT_EQ(o.name, layer);
    EXPECT_EQ(o.state, RowState::Origin);
    EXPECT_EQ(o.defective, side) << o.reason;
    EXPECT_TRUE(r.other_origins.empty()) << r.layers[size_t(r.other_origins[0])].name << ": "
                                         << r.layers[size_t(r.other_origins[0])].reason;
    EXPECT_EQ(r.structural_origins, 0);
    for (size_t i = 0; i < r.layers.size(); ++i) {
      const LayerReport& l = r.layers[i];
      if (int64_t(i) < r.origin) {
        EXPECT_TRUE(l.passed() || l.state == RowState::Mistrusted) << l.name << ": " << l.note();
      }
      if (int64_t(i) > r.origin) {
        EXPECT_TRUE(l.passed() || l.propagated() || l.state == RowState::Mistrusted) << l.name << ": " << l.note();
        if (l.propagated()) {
          EXPECT_EQ(l.propagated_from, layer) << l.name;
        }
      }
    }
  }

  // A = aten, B = the faulty backend, then the other way round.
  static void expect_both_ways(const std::string& faulty, const std::string& layer, const std::string& model = "yolov5n") {
    SCOPED_TRACE(faulty + " " + model);
    ASSERT_FALSE(layer.empty());
    const std::string aten = dump_of("aten", model), bad = dump_of(faulty, model);
    {
      SCOPED_TRACE("A = aten, B = faulty");
      expect_origin(compare(aten, bad), layer, Sides::B);
    }
    {
      SCOPED_TRACE("A = faulty, B = aten");
      expect_origin(compare(bad, aten), layer, Sides::A);
    }
  }

  static test::TempDir* dir_;
  static std::set<std::string> made_;
};

test::TempDir* Faulty::dir_ = nullptr;
std::set<std::string> Faulty::made_;

bool is_op(const Case& c, const char* op) { return op_name_of(c.line) == op; }
bool padded_conv(const Case& c) { return is_op(c, "conv2d") && Conv2dParams::parse(c.line).pad_h > 0; }
bool conv(const Case& c) { return is_op(c, "conv2d"); }
bool silu(const Case& c) { return is_op(c, "silu"); }
bool cat2(const Case& c) { return is_op(c, "cat"); }

TEST_F(Faulty, CorrectBackendsPass) {
  const CompareResult r = compare(dump_of("ref"), dump_of("aten"));
  EXPECT_EQ(r.failed, 0);
  EXPECT_EQ(r.unchecked, 0);
  EXPECT_EQ(r.origin, -1);
  EXPECT_EQ(r.passed + r.mistrusted, int(r.layers.size()));
  // Rounding differs at every conv: the two sides are not byte-identical there.
  int identical_convs = 0;
  for (const LayerReport& l : r.layers) identical_convs += l.op == "conv2d" && l.verdict.outputs.at(0).identical;
  EXPECT_LT(identical_convs, 10);
}

TEST_F(Faulty, PaddingOffByOne) {
  const int n = count_layers(padded_conv);
  for (int k : {1, n / 2, n}) expect_both_ways("faulty:pad:" + std::to_string(k), nth_layer(k, padded_conv));
}

TEST_F(Faulty, OneBiasChannelWrong) {
  const int n = count_layers(conv);
  for (int k : {1, n / 2, n}) expect_both_ways("faulty:bias:" + std::to_string(k), nth_layer(k, conv));
}

TEST_F(Faulty, SiluInFloat16) {
  const int n = count_layers(silu);
  for (int k : {1, n / 2, n}) expect_both_ways("faulty:silu16:" + std::to_string(k), nth_layer(k, silu));
}

TEST_F(Faulty, NanInOneElement) {
  const int n = count_layers(silu);
  for (int k : {2, n / 2, n - 1}) expect_both_ways("faulty:nan:" + std::to_string(k), nth_layer(k, silu));
}

TEST_F(Faulty, CatOffsetWrong) {
  // The forward's cats, then the post-processing's (one per image: nms.0.multi_label.cat).
  const int n = count_layers(cat2);
  for (int k : {1, n / 2}) expect_both_ways("faulty:cat_offset:" + std::to_string(k), nth_layer(k, cat2));
  expect_both_ways("faulty:cat_offset:" + std::to_string(n + 1), "nms.0.multi_label.cat");
}

TEST_F(Faulty, PostProcessingDefects) {
  expect_both_ways("faulty:nonzero_swap", "nms.0.multi_label.nonzero");
  expect_both_ways("faulty:nms_drop", "nms.0.nms");
}

// The same on yolov5s: a wrong bias early, in the middle and in the Detect head, and post-processing.
TEST_F(Faulty, Yolov5s) {
  const int n = count_layers(conv, "yolov5s");
  for (int k : {2, n / 2, n}) expect_both_ways("faulty:bias:" + std::to_string(k), nth_layer(k, conv, "yolov5s"), "yolov5s");
  expect_both_ways("faulty:nonzero_swap", "nms.0.multi_label.nonzero", "yolov5s");
  const CompareResult r = compare(dump_of("ref", "yolov5s"), dump_of("aten", "yolov5s"));
  EXPECT_EQ(r.failed + r.unchecked, 0);
}

// Two equal-score boxes kept in the other order is a correct NMS: explained, not an origin.
// (It needs ties: yolov5n at 640 has some among its candidates.)
TEST_F(Faulty, NmsTieIsACorrectAnswer) {
  RunOptions o;
  o.model = "yolov5n", o.img = 640, o.backend = "faulty:nms_tie", o.dump_dir = dir_->file("tie640");
  run_model(o);
  o.backend = "aten", o.dump_dir = dir_->file("aten640");
  run_model(o);
  const CompareResult r = compare(dir_->file("aten640"), dir_->file("tie640"));
  EXPECT_EQ(r.origin, -1);
  EXPECT_EQ(r.failed + r.unchecked, 0);
  bool nms_differs = false;
  for (const LayerReport& l : r.layers) {
    if (l.name == "nms.0.nms") nms_differs = l.explained() && l.reason.find("score ties") != std::string::npos;
  }
  EXPECT_TRUE(nms_differs);
}

// Weights and image that no layer produced and that differ are findings, even though every
// layer computes correctly from its own inputs.
TEST_F(Faulty, OtherSeedIsAFinding) {
  const CompareResult r = compare(dump_of("ref"), dump_of("ref", "yolov5n", 1));
  ASSERT_GE(r.origin, 0);
  const LayerReport& o = r.layers[size_t(r.origin)];
  EXPECT_EQ(o.name, "model.0.conv");
  EXPECT_NE(o.reason.find("differs and no layer produced it"), std::string::npos) << o.reason;
  EXPECT_EQ(o.defective, Sides::None);
  bool seed_in_header = false;
  for (const std::string& p : r.provenance) seed_in_header = seed_in_header || p.rfind("seed", 0) == 0;
  EXPECT_TRUE(seed_in_header);
}

// Without recorded inputs no layer can be checked locally: the differences are UNCHECKED and no
// layer is named a confident origin.
TEST_F(Faulty, NoRecordedInputsIsUnchecked) {
  Dump a = read_dump(dump_of("aten")), b = read_dump(dump_of("faulty:bias:30"));
  for (Dump* d : {&a, &b}) {
    for (DumpLayer& l : d->layers) l.inputs.clear();
  }
  const CompareResult r = compare_dumps(a, b, CompareOptions{});
  EXPECT_EQ(r.origin, -1);
  EXPECT_GT(r.unchecked, 0);
  for (const LayerReport& l : r.layers) EXPECT_FALSE(l.origin()) << l.name;
}

// A score within rounding of the confidence threshold: one correct side keeps the candidate,
// the other does not, and every count downstream differs. Each side is right on its own inputs.
class NearThreshold : public ::testing::Test {
 protected:
  // cls (sigmoid) -> gt (threshold) -> nonzero -> conf (index pairs): A on `a`, B on `b`, with
  // B's sigmoid output moved to the other side of 0.001 by one float32 step.
  static void write_chain(const std::string& dir, const Backend& be, bool nudge, const std::string& defect_backend = "") {
    const int64_t n = 64, c = 8;
    Tensor x(DType::Float32, Shape{n, c});
    for (int64_t i = 0; i < n * c; ++i) x.mutable_data<float>()[i] = float(std::sin(double(i)) * 4.0 - 2.0);
    const int64_t k = 77;
    x.mutable_data<float>()[k] = float(std::log(0.001 / 0.999));  // sigmoid ~ 0.001
    const std::string shape = "64x8";
    DumpWriter w(dir, DumpInfo{"chain", be.name(), "cpu", 0}, false);
    Tensor cls = be.run("sigmoid x=" + shape, {x})[0].clone();
    if (nudge) {
      float& v = cls.mutable_data<float>()[k];
      v = v > 0.001f ? 0.001f : std::nextafter(0.001f, 1.0f);
    }
    w.add_layer("cls", "sigmoid x=" + shape, 0, {{"x", "", x}}, {{"out0", "", cls}});
    const Tensor gt = be.run("threshold x=" + shape + " value=0.001", {cls})[0];
    w.add_layer("gt", "threshold x=" + shape + " value=0.001", 0, {{"x", "cls:out0", cls}}, {{"out0", "", gt}});
    const Backend& nz_backend = defect_backend.empty() ? be : backend(defect_backend);
    nz_backend.begin_run();  // a faulty backend strikes its first call from here
    const Tensor ij = nz_backend.run("nonzero x=" + shape, {gt})[0];
    w.add_layer("nz", "nonzero x=" + shape, 0, {{"x", "gt:out0", gt}}, {{"out0", "", ij}});
    const int64_t rows = ij.shape()[0];
    Tensor i(DType::Int64, Shape{rows}), j(DType::Int64, Shape{rows});
    for (int64_t r = 0; r < rows; ++r) i.mutable_data<int64_t>()[r] = ij.data<int64_t>()[2 * r], j.mutable_data<int64_t>()[r] = ij.data<int64_t>()[2 * r + 1];
    const std::string line = "index x=" + shape + " pairs=" + std::to_string(rows);
    const Tensor conf = be.run(line, {cls, i, j})[0];
    w.add_layer("conf", line, 0, {{"x", "cls:out0", cls}, {"i", "nz:out0", i}, {"j", "nz:out0", j}}, {{"out0", "", conf}});
    w.finish();
  }
};

TEST_F(NearThreshold, CorrectSidesPassAndADefectIsFound) {
  test::TempDir dir;
  write_chain(dir.file("a"), backend("ref"), false);
  write_chain(dir.file("b"), backend("aten"), true);
  CompareResult r = compare_dumps(read_dump(dir.file("a")), read_dump(dir.file("b")), CompareOptions{});
  ASSERT_EQ(r.layers.size(), 4u);
  EXPECT_EQ(r.failed + r.unchecked, 0) << r.layers[1].note() << "\n" << r.layers[2].note() << "\n" << r.layers[3].note();
  EXPECT_TRUE(r.layers[1].explained()) << r.layers[1].note();  // gt: one element flipped
  EXPECT_TRUE(r.layers[2].explained()) << r.layers[2].note();  // nonzero: one row more or less
  EXPECT_TRUE(r.layers[3].explained()) << r.layers[3].note();  // index: another call, by its shapes
  EXPECT_FALSE(r.layers[3].line_b.empty());
  // The same, with B's nonzero rows swapped: a defect behind a legitimate count difference.
  write_chain(dir.file("c"), backend("aten"), true, "faulty:nonzero_swap");
  r = compare_dumps(read_dump(dir.file("a")), read_dump(dir.file("c")), CompareOptions{});
  ASSERT_GE(r.origin, 0);
  EXPECT_EQ(r.layers[size_t(r.origin)].name, "nz");
  EXPECT_EQ(r.layers[size_t(r.origin)].defective, Sides::B);
}

}  // namespace
}  // namespace parity
