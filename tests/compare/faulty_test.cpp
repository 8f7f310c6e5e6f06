// Trusting the harness: a model run on each faulty backend (the reference with one planted
// defect) against a clean reference run. compare must fail and bisect must name exactly the
// layer that holds the defect, with the right state; a correct kernel (LibTorch) must pass on
// every layer of every YOLOv5 variant, and identical dumps must pass.
#include <gtest/gtest.h>

#include "cases/yolov5.h"
#include "compare/dump_compare.h"
#include "kernels/backend.h"
#include "kernels/cat/cat.h"
#include "kernels/conv2d/conv2d.h"
#include "runners/model_run.h"
#include "support/test_support.h"

namespace parity {
namespace {

class Faulty : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    run_into("ref", "ref", 192);
  }
  static void TearDownTestSuite() { delete dir_; }

  static std::string run_into(const std::string& backend_name, const std::string& folder, int64_t img,
                              const std::string& model = "yolov5n") {
    RunOptions o;
    o.model = model;
    o.img = img;
    o.backend = backend_name;
    o.dump_dir = dir_->file(folder);
    run_model(o);
    return o.dump_dir;
  }

  // The name of the n-th forward layer (1-based) of yolov5n at 192 for which `pick` holds.
  static std::string nth_layer(int n, const std::function<bool(const Case&)>& pick) {
    for (const Case& c : yolov5_forward(yolov5_variant("yolov5n"), 192, 1)) {
      if (pick(c) && --n == 0) return c.name;
    }
    return "";
  }

  static CompareResult compare_with_ref(const std::string& b) {
    return compare_dumps(read_dump(dir_->file("ref")), read_dump(b), CompareOptions{});
  }

  static void expect_origin(const std::string& defect, const std::string& layer) {
    SCOPED_TRACE(defect);
    const CompareResult r = compare_with_ref(run_into("faulty:" + defect, "f-" + defect, 192));
    ASSERT_GE(r.origin, 0) << "nothing diverged";
    const LayerReport& o = r.layers[size_t(r.origin)];
    EXPECT_EQ(o.name, layer);
    EXPECT_EQ(o.state, State::Failed);
    EXPECT_TRUE(o.inputs_agree);
    EXPECT_GT(r.failed, 0);
    EXPECT_TRUE(r.other_origins.empty()) << r.layers[size_t(r.other_origins[0])].name;
    for (size_t i = size_t(r.origin) + 1; i < r.layers.size(); ++i) {
      if (r.layers[i].state == State::Failed) {
        EXPECT_EQ(r.layers[i].propagated_from, layer) << r.layers[i].name;
      }
    }
  }

  static test::TempDir* dir_;
};

test::TempDir* Faulty::dir_ = nullptr;

bool is_conv(const Case& c) { return c.line.rfind("conv2d", 0) == 0; }

TEST_F(Faulty, PaddingOffByOne) {
  expect_origin("pad:3", nth_layer(3, [](const Case& c) { return is_conv(c) && Conv2dParams::parse(c.line).pad_h > 0; }));
}

TEST_F(Faulty, OneBiasChannelWrong) {
  expect_origin("bias:5", nth_layer(5, [](const Case& c) { return is_conv(c) && Conv2dParams::parse(c.line).bias; }));
}

TEST_F(Faulty, SiluInFloat16) {
  expect_origin("silu16:7", nth_layer(7, [](const Case& c) { return c.line.rfind("silu", 0) == 0; }));
}

TEST_F(Faulty, NanInOneElement) {
  expect_origin("nan:2", nth_layer(2, [](const Case& c) { return c.line.rfind("silu", 0) == 0; }));
}

TEST_F(Faulty, CatOffsetWrong) {
  expect_origin("cat_offset:4", nth_layer(4, [](const Case& c) { return c.line.rfind("cat", 0) == 0; }));
}

TEST_F(Faulty, NonzeroRowsSwapped) { expect_origin("nonzero_swap", "nms.0.multi_label.nonzero"); }

// A flipped tie is classified, not failed: bisect names the nms layer with its differences
// explained as score ties. (It needs ties: yolov5n at 640 has some among its 27801 candidates.)
TEST_F(Faulty, NmsTieFlippedIsExplained) {
  const std::string a = run_into("ref", "ref640", 640), b = run_into("faulty:nms_tie", "tie640", 640);
  const CompareResult r = compare_dumps(read_dump(a), read_dump(b), CompareOptions{});
  ASSERT_GE(r.origin, 0);
  const LayerReport& o = r.layers[size_t(r.origin)];
  EXPECT_EQ(o.name, "nms.0.nms");
  EXPECT_TRUE(o.explained);
  EXPECT_EQ(o.state, State::Passed);
  EXPECT_NE(o.reason.find("score ties"), std::string::npos) << o.reason;
}

TEST_F(Faulty, IdenticalDumpsPass) {
  const CompareResult r = compare_with_ref(run_into("ref", "ref-again", 192));
  EXPECT_EQ(r.failed, 0);
  EXPECT_EQ(r.origin, -1);
  for (const LayerReport& l : r.layers) {
    for (const TensorReport& t : l.outputs) EXPECT_TRUE(t.identical) << l.name;
  }
}

// The tolerance never fails a correct kernel (LibTorch) on any YOLOv5 variant, yet catches a
// padding off by one and one wrong bias channel in each of them.
TEST_F(Faulty, ToleranceHoldsForEveryVariant) {
  for (const std::string& model : yolov5_variant_names()) {
    SCOPED_TRACE(model);
    const Dump ref = read_dump(run_into("ref", model + "-ref", 64, model));
    const CompareResult aten = compare_dumps(ref, read_dump(run_into("aten", model + "-aten", 64, model)), CompareOptions{});
    EXPECT_EQ(aten.failed, 0);
    EXPECT_EQ(aten.origin, -1);
    for (const char* defect : {"faulty:pad:2", "faulty:bias:9"}) {
      const CompareResult f = compare_dumps(ref, read_dump(run_into(defect, model + "-" + defect, 64, model)), CompareOptions{});
      EXPECT_GT(f.failed, 0) << defect;
      EXPECT_GE(f.origin, 0) << defect;
    }
  }
}

}  // namespace
}  // namespace parity
