// parity inspect on files and folders the tests write themselves, and on malformed files.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../core/npy_malformed_cases.h"
#include "core/npy.h"
#include "support/test_support.h"

namespace parity {
namespace {

using test::run_parity;

TEST(Inspect, ReportsStatisticsOfAKnownTensor) {
  test::TempDir dir;
  Tensor t(DType::Float32, Shape{2, 3});
  const float values[] = {-1.5f, 0.0f, 2.0f, 4.0f, std::nanf(""), 1.0f};
  std::copy(std::begin(values), std::end(values), t.mutable_data<float>());
  write_npy(dir.file("x.npy"), t);

  const auto r = run_parity({"inspect", "--json", dir.file("x.npy")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["dtype"], "float32");
  EXPECT_EQ(j["shape"], nlohmann::json::array({2, 3}));
  EXPECT_EQ(j["min"].get<double>(), -1.5);
  EXPECT_EQ(j["max"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(j["mean"].get<double>(), 5.5 / 5);
  EXPECT_EQ(j["nan"], 1);
  EXPECT_EQ(j["zeros"], 1);
  EXPECT_EQ(j["first"][4], "nan");
  EXPECT_EQ(j["first"][3].get<double>(), 4.0);

  const auto text = run_parity({"inspect", "--values", "3", dir.file("x.npy")});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("shape   2x3"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("min     -1.5"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("[-1.5, 0, 2, ...]"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("over the 5 finite elements"), std::string::npos) << text.out;
}

TEST(Inspect, FolderGivesOneLinePerTensor) {
  test::TempDir dir;
  write_npy(dir.file("model.0.conv.out.npy"), Tensor(DType::Float32, Shape{1, 16, 32, 32}));
  Tensor idx(DType::Int64, Shape{3});
  idx.mutable_data<int64_t>()[2] = int64_t(1) << 60;
  write_npy(dir.file("nms.keep.npy"), idx);
  write_npy(dir.file("mask.npy"), Tensor(DType::Bool, Shape{0}));
  test::write_bytes(dir.file("notes.txt"), "ignored");

  const auto r = run_parity({"inspect", dir.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = test::lines_of(r.out);
  ASSERT_EQ(lines.size(), 5u) << r.out;  // header, 3 tensors, summary
  EXPECT_EQ(lines[1].rfind("mask.npy", 0), 0u);
  EXPECT_NE(lines[3].find("1152921504606846976"), std::string::npos) << lines[3];  // exact int64
  EXPECT_NE(lines[4].find("3 tensors"), std::string::npos);
  EXPECT_NE(lines[4].find("no manifest.json"), std::string::npos);
}

TEST(Inspect, FolderWithABadFileReportsItAndFails) {
  test::TempDir dir;
  write_npy(dir.file("good.npy"), Tensor(DType::Float32, Shape{4}));
  test::write_bytes(dir.file("bad.npy"), "garbage");
  const auto r = run_parity({"inspect", dir.path()});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("good.npy"), std::string::npos);  // the good file is still shown
  EXPECT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("bad.npy: not a .npy file (bad magic)"), std::string::npos) << r.err;
}

TEST(Inspect, MalformedFilesExitThreeWithOneLine) {
  test::TempDir dir;
  for (const auto& c : test::malformed_npy_cases()) {
    const std::string path = dir.file(c.name + ".npy");
    test::write_bytes(path, c.bytes);
    const auto r = run_parity({"inspect", path});
    EXPECT_EQ(r.exit_code, 3) << c.name;
    EXPECT_TRUE(r.out.empty()) << c.name << ": " << r.out;
    const auto lines = test::lines_of(r.err);
    ASSERT_EQ(lines.size(), 1u) << c.name << ": " << r.err;
    EXPECT_EQ(lines[0].rfind("parity inspect: " + path + ": ", 0), 0u) << lines[0];
    EXPECT_NE(lines[0].find(c.reason), std::string::npos) << lines[0];
  }
}

}  // namespace
}  // namespace parity
