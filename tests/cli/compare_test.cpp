// parity run, compare and bisect through the binary: exit codes, reports, --rerun, bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/test_support.h"

namespace parity {
namespace {

using test::run_parity;

class CompareCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    for (const char* b : {"ref", "aten", "faulty:bias:4"}) {
      const auto r = run_parity({"run", "yolov5n", "--img", "192", "--backend", b, "--dump", dir_->file(std::string("d-") + b)});
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string dump(const char* b) { return dir_->file(std::string("d-") + b); }
  static test::TempDir* dir_;
};
test::TempDir* CompareCli::dir_ = nullptr;

TEST_F(CompareCli, CorrectKernelPassesWithReports) {
  const auto r = run_parity({"compare", dump("ref"), dump("aten"), "--json", dir_->file("r.json"), "--csv", dir_->file("r.csv"),
                             "--html", dir_->file("r.html")});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("157 layers: 157 passed, 0 failed"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(test::read_text(dir_->file("r.json")));
  EXPECT_EQ(j["layers"].size(), 157u);
  EXPECT_TRUE(j["origin"].is_null());
  EXPECT_EQ(test::lines_of(test::read_text(dir_->file("r.csv"))).size(), 158u);  // header + one output per layer
  const std::string html = test::read_text(dir_->file("r.html"));
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_EQ(html.find("http"), html.find("http://www.w3.org/2000/svg"));  // nothing fetched: self-contained
  EXPECT_EQ(run_parity({"bisect", dump("ref"), dump("aten")}).exit_code, 0);
}

TEST_F(CompareCli, DefectIsCaughtAndBisectedWithRerun) {
  auto r = run_parity({"compare", dump("ref"), dump("faulty:bias:4")});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("FAILED*"), std::string::npos) << r.out;
  r = run_parity({"bisect", dump("ref"), dump("faulty:bias:4"), "--rerun", "aten"});
  EXPECT_EQ(r.exit_code, 1);
  const auto lines = test::lines_of(r.out);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "origin: model.2.m.0.cv1.conv (layer 6, conv2d)") << r.out;
  EXPECT_NE(r.out.find("propagated:"), std::string::npos) << r.out;
  // LibTorch run on A's inputs reproduces A: the defect is B's kernel, not the data.
  EXPECT_NE(r.out.find("rerun of model.2.m.0.cv1.conv on aten with A's inputs, out0: PASSED"), std::string::npos) << r.out;
  // Filters and tolerance overrides.
  r = run_parity({"compare", dump("ref"), dump("faulty:bias:4"), "--layers", "^model\\.0\\."});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  // With zero tolerance (conv2d keeps its reduction bound) a correct float32 SiLU parts ways
  // with the float64 reference at the first activation.
  r = run_parity({"bisect", dump("ref"), dump("aten"), "--atol", "0", "--rtol", "0"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(r.out.rfind("origin: model.0.act (layer 1, silu)", 0), 0u) << r.out;
}

TEST_F(CompareCli, BadInputIsExitThree) {
  std::filesystem::create_directories(dir_->file("incomplete"));
  std::filesystem::copy(dump("ref"), dir_->file("incomplete"), std::filesystem::copy_options::recursive |
                                                                   std::filesystem::copy_options::overwrite_existing);
  std::filesystem::remove(dir_->file("incomplete/manifest.json"));
  auto r = run_parity({"compare", dump("ref"), dir_->file("incomplete")});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("no manifest.json: an incomplete dump"), std::string::npos) << r.err;
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"compare", dump("ref")},
           {"compare", dump("ref"), "/nonexistent"},
           {"compare", dump("ref"), dump("aten"), "--atol", "1e-3"},
           {"compare", dump("ref"), dump("aten"), "--tol-file", "/nonexistent.json"},
           {"bisect", dump("ref"), dump("aten"), "--rerun", "tpu"},
           {"run", "yolov5n", "--img", "192", "--dump", dump("ref")},
           {"run", "yolov5q"},
           {"run", "yolov5n", "--backend", "faulty:bogus"}}) {
    const auto b = run_parity(bad);
    EXPECT_EQ(b.exit_code, 3) << bad.back() << b.out;
    EXPECT_EQ(test::lines_of(b.err).size(), 1u) << b.err;
  }
}

// A defect in a kernel fails the golden check with the pack and layer named; regenerating the
// packs reproduces them bit for bit (nothing moves).
TEST(GoldenCli, DefectNamedAndUpdateReproducible) {
  const std::string golden = std::string(PARITY_SOURCE_DIR) + "/golden";
  auto r = run_parity({"golden", "check", "--root", golden, "--backend", "faulty:bias:3"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("FAILED  conv2d/pointwise  conv2d x=2x32x9x9 w=32x32x1x1 bias"), std::string::npos) << r.out;
  test::TempDir dir;
  std::filesystem::copy(golden, dir.file("golden"), std::filesystem::copy_options::recursive);
  r = run_parity({"golden", "update", "--root", dir.file("golden")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* pack : {"conv2d", "silu", "cat", "nonzero", "index", "nms", "yolov5n_128"}) {
    EXPECT_NE(r.out.find(std::string(pack) + ": 0 of "), std::string::npos) << pack << "\n" << r.out;
  }
  EXPECT_EQ(run_parity({"golden", "check", "--root", dir.file("nowhere")}).exit_code, 3);
  EXPECT_EQ(run_parity({"golden", "check", "--root", golden, "--pack", "resnet"}).exit_code, 3);
}

}  // namespace
}  // namespace parity
