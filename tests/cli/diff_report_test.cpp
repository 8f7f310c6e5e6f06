// parity diff-report through the binary, on real reports of `parity compare --json`: a planted
// defect shows as the layers that got worse (its origin first), the reverse as better, and bad
// input is one line naming the file and exit 3.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace parity {
namespace {

using test::run_parity;

class DiffReport : public ::testing::Test {
 protected:
  // Dumps of yolov5n at 192 (under a second each) and the reports diffed below: ref against a
  // correct kernel (aten), against itself, and against a conv2d with a wrong bias.
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    for (const char* b : {"ref", "aten", "faulty:bias:4"}) {
      const auto r = run_parity({"run", "yolov5n", "--img", "192", "--backend", b, "--dump", dir_->file(std::string("d-") + b)});
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    ASSERT_EQ(compare("ref", "aten", "clean.json"), 0);
    ASSERT_EQ(compare("ref", "ref", "self.json"), 0);
    ASSERT_EQ(compare("ref", "faulty:bias:4", "bias.json"), 1);
  }
  static void TearDownTestSuite() { delete dir_; }

  static int compare(const std::string& a, const std::string& b, const std::string& report) {
    return run_parity({"compare", dir_->file("d-" + a), dir_->file("d-" + b), "--json", dir_->file(report)}).exit_code;
  }
  static std::string file(const std::string& name) { return dir_->file(name); }
  static test::TempDir* dir_;
};
test::TempDir* DiffReport::dir_ = nullptr;

// The rows of the table: the lines between the header row ("change ...") and the summary.
std::vector<std::string> table_rows(const std::string& out) {
  std::vector<std::string> rows;
  bool in_table = false;
  for (const std::string& line : test::lines_of(out)) {
    if (line.rfind("change ", 0) == 0) {
      in_table = true;
    } else if (in_table && (line.rfind("worse ", 0) == 0 || line.rfind("better ", 0) == 0 || line.rfind("same ", 0) == 0)) {
      rows.push_back(line);
    }
  }
  return rows;
}

std::string last_line(const std::string& out) {
  const auto lines = test::lines_of(out);
  return lines.empty() ? "" : lines.back();
}

TEST_F(DiffReport, PlantedDefectIsWorseWithItsOriginFirst) {
  const auto r = run_parity({"diff-report", file("clean.json"), file("bias.json"), "--json", file("diff.json")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto rows = table_rows(r.out);
  ASSERT_FALSE(rows.empty()) << r.out;
  // The layer whose kernel is wrong (an origin now) leads; the layers it propagated to follow.
  EXPECT_EQ(rows[0].rfind("worse ", 0), 0u) << rows[0];
  EXPECT_NE(rows[0].find("PASSED -> FAILED*"), std::string::npos) << rows[0];
  EXPECT_NE(rows[0].find("model.2.m.0.cv1.conv"), std::string::npos) << rows[0];
  EXPECT_NE(rows[1].find("PASSED -> PROPAGATED "), std::string::npos) << rows[1];
  EXPECT_NE(r.out.find("157 layers in both: 148 worse, "), std::string::npos) << r.out;
  EXPECT_NE(last_line(r.out).find("148 state changes (1 PASSED -> FAILED*, 147 PASSED -> PROPAGATED)"), std::string::npos) << r.out;

  const auto j = nlohmann::json::parse(test::read_text(file("diff.json")));
  EXPECT_EQ(j["worse"], 148);
  EXPECT_EQ(j["layers"].size(), 157u);
  const auto& first = j["layers"][0];
  EXPECT_EQ(first["name"], "model.2.m.0.cv1.conv");
  EXPECT_EQ(first["change"], "worse");
  EXPECT_EQ(first["state_before"], "PASSED");
  EXPECT_EQ(first["state_after"], "FAILED");
  EXPECT_EQ(first["origin_after"], true);
  EXPECT_GT(first["err_over_tol_after"].get<double>(), 1.0);  // beyond tolerance
  EXPECT_LT(first["err_over_tol_before"].get<double>(), 1.0);
  EXPECT_EQ(j["state_changes"]["PASSED -> FAILED*"], 1);
  EXPECT_EQ(j["summary"], last_line(r.out));
  // Sorted: no layer after a better one is worse.
  bool seen_better = false;
  for (const auto& l : j["layers"]) {
    if (l["change"] == "better") seen_better = true;
    EXPECT_FALSE(seen_better && l["change"] == "worse") << l["name"];
  }
}

TEST_F(DiffReport, FixedDefectIsBetterAndExitsZero) {
  const auto r = run_parity({"diff-report", file("bias.json"), file("clean.json")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(" 0 worse, "), std::string::npos) << r.out;
  const auto rows = table_rows(r.out);
  ASSERT_FALSE(rows.empty()) << r.out;
  // The most improved comes last: the origin, no longer failing.
  EXPECT_EQ(rows.back().rfind("better ", 0), 0u) << rows.back();
  EXPECT_NE(rows.back().find("FAILED* -> PASSED"), std::string::npos) << rows.back();
  EXPECT_NE(rows.back().find("model.2.m.0.cv1.conv"), std::string::npos) << rows.back();
  for (const std::string& row : rows) EXPECT_EQ(row.rfind("worse ", 0), std::string::npos) << row;
}

TEST_F(DiffReport, SameReportIsUnchanged) {
  auto r = run_parity({"diff-report", file("clean.json"), file("clean.json")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(last_line(r.out), "157 layers in both: 0 worse, 0 better, 157 unchanged; 0 state changes") << r.out;
  EXPECT_TRUE(table_rows(r.out).empty()) << r.out;
  r = run_parity({"diff-report", file("clean.json"), file("clean.json"), "--all"});
  EXPECT_EQ(table_rows(r.out).size(), 157u) << r.out;
}

// From identical outputs to rounding differences: the layers whose error grew past the
// threshold are worse although every layer still passes; a high threshold hides them.
TEST_F(DiffReport, ThresholdDecidesWhatCountsAsAChange) {
  auto r = run_parity({"diff-report", file("self.json"), file("clean.json"), "--json", file("rounding.json")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto j = nlohmann::json::parse(test::read_text(file("rounding.json")));
  ASSERT_GT(j["worse"].get<int>(), 0);
  EXPECT_EQ(j["state_changes"].size(), 0u);
  const auto& first = j["layers"][0];
  EXPECT_EQ(first["state_after"], "PASSED");
  EXPECT_GT(first["factor"].get<double>(), 2.0);
  EXPECT_NE(table_rows(r.out)[0].find(first["name"].get<std::string>()), std::string::npos) << r.out;

  r = run_parity({"diff-report", file("self.json"), file("clean.json"), "--threshold", "1000"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("0 worse, 0 better, 157 unchanged"), std::string::npos) << r.out;
  r = run_parity({"diff-report", file("self.json"), file("clean.json"), "--threshold", "0.5"});
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.err.find("--threshold"), std::string::npos) << r.err;
}

// A layer in one report only (a --layers run, a model edited in between) is listed apart and
// changes neither the counts nor the exit code.
TEST_F(DiffReport, LayersInOneReportOnlyAreListedApart) {
  auto j = nlohmann::json::parse(test::read_text(file("clean.json")));
  auto& layers = j["layers"];
  const std::string dropped = layers[3]["name"];
  layers.erase(layers.begin() + 3);
  test::write_bytes(file("fewer.json"), j.dump());
  const auto r = run_parity({"diff-report", file("fewer.json"), file("clean.json")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("only in " + file("clean.json") + ": " + dropped + "\n"), std::string::npos) << r.out;
  EXPECT_NE(last_line(r.out).find("156 layers in both: 0 worse, 0 better, 156 unchanged; 0 state changes; 1 only in " + file("clean.json")),
            std::string::npos)
      << r.out;
}

TEST_F(DiffReport, BadInputIsOneLineNamingTheFileAndExitThree) {
  test::write_bytes(file("not.json"), "{\"layers\": [");
  test::write_bytes(file("other.json"), "{\"layers\": [], \"x\": 1}");
  nlohmann::json no_state = nlohmann::json::parse(test::read_text(file("clean.json")));
  no_state["layers"][2].erase("state");
  test::write_bytes(file("no-state.json"), no_state.dump());
  const std::string manifest = file("d-ref/manifest.json");  // JSON of parity's, but a dump's
  const std::vector<std::pair<std::string, std::string>> bad = {
      {file("missing.json"), "cannot open: No such file or directory"},
      {file("not.json"), "not JSON (syntax error at byte"},
      {file("other.json"), "not a parity compare report (\"a\" missing or not a string)"},
      {manifest, "not a parity compare report"},
      {file("no-state.json"), "layer 2 (model.1.conv): \"state\" missing or not a string"},
      {file("d-ref"), "is a folder, not a JSON report"},
  };
  for (const auto& [path, says] : bad) {
    for (const bool as_after : {false, true}) {
      const auto r = as_after ? run_parity({"diff-report", file("clean.json"), path}) : run_parity({"diff-report", path, file("clean.json")});
      EXPECT_EQ(r.exit_code, 3) << path << "\n" << r.out << r.err;
      EXPECT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
      EXPECT_NE(r.err.find("parity diff-report: " + path + ": "), std::string::npos) << r.err;
      EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
      EXPECT_TRUE(r.out.empty()) << r.out;  // nothing printed before the input was known good
    }
  }
}

// Reports of another model, or of the same model at another image size, do not diff.
TEST_F(DiffReport, ReportsOfOtherModelsOrShapesAreRefused) {
  ASSERT_EQ(run_parity({"run", "yolov5s", "--img", "192", "--dump", file("d-s")}).exit_code, 0);
  ASSERT_EQ(run_parity({"run", "yolov5n", "--img", "160", "--dump", file("d-160")}).exit_code, 0);
  ASSERT_EQ(compare("s", "s", "s.json"), 0);
  ASSERT_EQ(compare("160", "160", "160.json"), 0);
  auto r = run_parity({"diff-report", file("clean.json"), file("s.json")});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find(file("s.json") + ": a report on yolov5s, but " + file("clean.json") + " is a report on yolov5n"), std::string::npos)
      << r.err;
  r = run_parity({"diff-report", file("clean.json"), file("160.json")});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find(file("160.json") + ": only "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("layers in common with " + file("clean.json") + " run the same call"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace parity
