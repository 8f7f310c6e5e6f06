// parity run, compare and bisect through the binary: exit codes, reports, --rerun, bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <nlohmann/json.hpp>

#include "support/test_support.h"

namespace parity {
namespace {

using test::run_parity;
using test::run_process;

class CompareCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    for (const char* b : {"ref", "aten", "faulty:bias:4", "faulty:tf32"}) {
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
  EXPECT_NE(r.out.find("157 layers: 157 passed ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0 failed (0 structural), 0 propagated, 0 mistrusted, 0 unchecked"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(test::read_text(dir_->file("r.json")));
  EXPECT_EQ(j["layers"].size(), 157u);
  EXPECT_TRUE(j["origin"].is_null());
  const auto csv = test::lines_of(test::read_text(dir_->file("r.csv")));
  EXPECT_EQ(csv.size(), 158u);  // header + one output per layer
  // Every format tells the same state: no CSV row says FAILED where the table says PASSED.
  for (size_t i = 1; i < csv.size(); ++i) EXPECT_EQ(csv[i].find(",FAILED,"), std::string::npos) << csv[i];
  int explained = 0;
  for (const auto& l : j["layers"]) {
    EXPECT_EQ(l["state"], "PASSED") << l["name"];
    explained += l["explained"].get<bool>();
    if (l["explained"].get<bool>()) {
      EXPECT_NE(l["note"].get<std::string>(), "") << l["name"];
    }
  }
  EXPECT_EQ(j["explained"], explained);
  const std::string html = test::read_text(dir_->file("r.html"));
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_EQ(html.find("http"), html.find("http://www.w3.org/2000/svg"));  // nothing fetched: self-contained
  EXPECT_EQ(run_parity({"bisect", dump("ref"), dump("aten")}).exit_code, 0);
}

// Dumps of another image size or batch, and dumps of another model, are not comparable: one
// line on stderr saying so, exit 2, not a row per layer.
TEST_F(CompareCli, DumpsOfOtherModelsOrShapesSayItInOneLine) {
  const std::string other_img = dir_->file("d-ref-160"), other_batch = dir_->file("d-ref-b2"), other_model = dir_->file("d-ref-s");
  ASSERT_EQ(run_parity({"run", "yolov5n", "--img", "160", "--dump", other_img}).exit_code, 0);
  ASSERT_EQ(run_parity({"run", "yolov5n", "--img", "192", "--batch", "2", "--dump", other_batch}).exit_code, 0);
  ASSERT_EQ(run_parity({"run", "yolov5s", "--img", "192", "--dump", other_model}).exit_code, 0);
  for (const char* cmd : {"compare", "bisect"}) {
    for (const auto& [other, says] : {std::pair<std::string, std::string>{other_img, "A ran yolov5n img 192, B img 160: the runs do not match"},
                                      {other_batch, "A ran yolov5n batch 1, B batch 2: the runs do not match"}}) {
      const auto r = run_parity({cmd, dump("ref"), other});
      EXPECT_EQ(r.exit_code, 2) << cmd << ": " << r.out << r.err;
      EXPECT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
      EXPECT_NE(r.err.find(says), std::string::npos) << cmd << ": " << r.err;
      EXPECT_TRUE(r.out.empty()) << cmd << ": " << r.out;
    }
    const auto r = run_parity({cmd, dump("ref"), other_model});
    EXPECT_EQ(r.exit_code, 2) << cmd << ": " << r.out;
    EXPECT_NE(r.err.find("A is yolov5n on ref, B is yolov5s on ref: different models, "), std::string::npos) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find("x=1x3x192x192"), std::string::npos) << r.err;  // the first calls, side by side
    EXPECT_EQ(r.out.find("propagated"), std::string::npos) << cmd << ": " << r.out;
  }
  // Dumps of one model and shape get the usual table.
  EXPECT_EQ(run_parity({"compare", dump("ref"), dump("aten")}).out.find("nothing to compare"), std::string::npos);
}

// The table row whose layer cell starts with `name`, "" when none.
std::string html_row_of_layer(const std::string& html, const std::string& name) {
  const size_t cell = html.find("<td class='l'>" + name + "<");
  if (cell == std::string::npos) return "";
  const size_t start = html.rfind("<tr id=", cell);
  return html.substr(start, html.find("</tr>", cell) - start);
}

// The value of the first attribute `key` at or after `from` (before it when `backwards`); "" when none.
std::string attribute_at(const std::string& html, size_t from, const std::string& key, bool backwards) {
  if (from == std::string::npos) return "";
  const size_t at = backwards ? html.rfind(key + "='", from) : html.find(key + "='", from);
  if (at == std::string::npos) return "";
  const size_t begin = at + key.size() + 2;
  return html.substr(begin, html.find('\'', begin) - begin);
}

// The plot's link, column and marks of the layer in table row `row_html`.
std::string plot_layer_of_row(const std::string& html, const std::string& row_html) {
  const size_t at = html.find("<a href='#" + attribute_at(row_html, 0, "id", false) + "' class='layer'>");
  return at == std::string::npos ? "" : html.substr(at, html.find("</a>", at) - at);
}

// The HTML page of a real comparison, compare's and bisect's: a row per layer linked from the
// plot, the origin linked from the header, identical float layers on the zero baseline, keep
// lists of other lengths on the structural lane.
TEST_F(CompareCli, HtmlReportLinksRowsAndOrigin) {
  const std::string page = dir_->file("bias.html"), bisect_page = dir_->file("bisect.html");
  EXPECT_EQ(run_parity({"compare", dump("ref"), dump("faulty:bias:4"), "--html", page}).exit_code, 1);
  EXPECT_EQ(run_parity({"bisect", dump("ref"), dump("faulty:bias:4"), "--html", bisect_page}).exit_code, 1);
  for (const std::string& path : {page, bisect_page}) {
    const std::string html = test::read_text(path);
    size_t rows = 0;
    for (size_t at = html.find("<tr id='L"); at != std::string::npos; at = html.find("<tr id='L", at + 1)) {
      EXPECT_EQ(html.compare(at, 9 + std::to_string(rows).size() + 1, "<tr id='L" + std::to_string(rows) + "'"), 0) << rows;
      EXPECT_NE(html.find("<a href='#L" + std::to_string(rows) + "' class='layer'>"), std::string::npos) << rows;
      ++rows;
    }
    EXPECT_EQ(rows, 157u);
    const std::string header = html.substr(0, html.find("<svg"));
    EXPECT_NE(header.find("Origin: <a href='#L6'>model.2.m.0.cv1.conv</a> (layer 6, conv2d, defective: B)"), std::string::npos)
        << header;
    EXPECT_EQ(html.find("http"), html.find("http://www.w3.org/2000/svg"));
    // The first layers are identical: their dots sit on the dashed zero baseline.
    const std::string zero_y = attribute_at(html, html.find("class='zero'"), "y1", true);
    ASSERT_FALSE(zero_y.empty());
    EXPECT_EQ(attribute_at(html, html.find("<a href='#L0' class='layer'>"), "cy", false), zero_y);
    // Fewer candidates reach nms: the argsort's output is shorter on B.
    const std::string sort = html_row_of_layer(html, "nms.0.sort");
    EXPECT_NE(sort.find("class='tag struct'"), std::string::npos) << sort;
    EXPECT_NE(plot_layer_of_row(html, sort).find("class='pt struct s-propagated'"), std::string::npos) << plot_layer_of_row(html, sort);
  }
}

// int64 outputs (argsort, nonzero) are told apart from float errors by what the judge computed
// for them: their own lane on the plot and a tag in the table.
TEST_F(CompareCli, HtmlReportMarksIndexOutputs) {
  const std::string page = dir_->file("aten.html");
  EXPECT_EQ(run_parity({"compare", dump("ref"), dump("aten"), "--html", page}).exit_code, 0);
  const std::string html = test::read_text(page);
  for (const char* index_layer : {"nms.0.sort", "nms.0.multi_label.nonzero"}) {
    const std::string row = html_row_of_layer(html, index_layer);
    EXPECT_NE(row.find("class='tag exact'"), std::string::npos) << index_layer << ": " << row;
    const std::string marks = plot_layer_of_row(html, row);
    EXPECT_NE(marks.find("class='pt exact s-passed'"), std::string::npos) << index_layer << ": " << marks;
    EXPECT_EQ(marks.find("pt float"), std::string::npos) << index_layer << ": " << marks;
  }
  const std::string conv = html_row_of_layer(html, "model.0.conv");
  ASSERT_FALSE(conv.empty());
  EXPECT_EQ(conv.find("class='tag exact'"), std::string::npos) << conv;
  EXPECT_NE(plot_layer_of_row(html, conv).find("class='pt float s-passed'"), std::string::npos) << plot_layer_of_row(html, conv);
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
  EXPECT_NE(r.out.find("  defective: B"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rerun of model.2.m.0.cv1.conv on aten with B's inputs: aten differs from B's output; against the judge "
                       "(ref): B does not match, aten matches"),
            std::string::npos)
      << r.out;
  // The rerun judges under bisect's own tolerance (it once built default options of its own):
  // exact, LibTorch's rounding no longer reproduces A's output.
  r = run_parity({"bisect", dump("ref"), dump("faulty:bias:4"), "--rerun", "aten", "--atol", "0", "--rtol", "0"});
  EXPECT_NE(r.out.find("rerun of model.2.m.0.cv1.conv on aten with A's inputs: aten differs from A's output; against the judge "
                       "(ref): A matches, aten does not match"),
            std::string::npos)
      << r.out;
  // Filters and tolerance overrides.
  r = run_parity({"compare", dump("ref"), dump("faulty:bias:4"), "--layers", "^model\\.0\\."});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  r = run_parity({"compare", dump("ref"), dump("faulty:bias:4"), "--layers", "^no-such-layer$"});
  EXPECT_EQ(r.exit_code, 4) << r.out;  // nothing checked
  // --atol/--rtol replace every float tolerance, conv2d's bound included: with zero tolerance
  // a correct float32 conv parts ways with the float64 reference at the first layer.
  r = run_parity({"bisect", dump("ref"), dump("aten"), "--atol", "0", "--rtol", "0"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(r.out.rfind("origin: model.0.conv (layer 0, conv2d)", 0), 0u) << r.out;
}

// A tolerance file: patterns fully match a layer or op name, the last matching entry wins, and
// a malformed entry is one line naming the field.
TEST_F(CompareCli, ToleranceFileSemantics) {
  auto tol_file = [&](const std::string& name, const std::string& json) {
    test::write_bytes(dir_->file(name), json);
    return dir_->file(name);
  };
  // "silu" fully matches the op: every SiLU exact, then the later model\.0\.act entry (also
  // a full match) loosens the first one again; conv2d keeps its bound.
  const std::string exact_silu = tol_file("silu.json", R"({"silu": {"atol": 0, "rtol": 0}})");
  auto r = run_parity({"bisect", dump("ref"), dump("aten"), "--tol-file", exact_silu});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(r.out.rfind("origin: model.0.act (layer 1, silu)", 0), 0u) << r.out;
  const std::string last_wins =
      tol_file("last.json", R"({"silu": {"atol": 0, "rtol": 0}, "model\\.0\\.act": {"atol": 1e-5, "rtol": 1.3e-6}})");
  r = run_parity({"bisect", dump("ref"), dump("aten"), "--tol-file", last_wins});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(r.out.find("origin: model.0.act "), std::string::npos) << r.out;
  // A partial match ("act" inside "model.0.act") is no match.
  r = run_parity({"compare", dump("ref"), dump("aten"), "--tol-file", tol_file("part.json", R"({"act": {"atol": 0, "rtol": 0}})")});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  for (const auto& [json, says] : std::vector<std::pair<std::string, std::string>>{
           {R"({"silu": {"atol": 0}})", "entry \"silu\": missing field \"rtol\""},
           {R"({"silu": {"atol": 0, "rtol": "x"}})", "field \"rtol\" must be a number"},
           {R"({"silu": {"atol": 0, "rtol": 0, "rtl": 1}})", "unknown field \"rtl\""},
           {R"({"silu": {"atol": -1, "rtol": 0}})", "field \"atol\" must be finite and >= 0"},
           {R"({"(": {"atol": 0, "rtol": 0}})", "bad regular expression"}}) {
    r = run_parity({"compare", dump("ref"), dump("aten"), "--tol-file", tol_file("bad.json", json)});
    EXPECT_EQ(r.exit_code, 3) << json << "\n" << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << json << "\n" << r.err;
    EXPECT_NE(r.err.find("bad.json"), std::string::npos) << r.err;
  }
  r = run_parity({"compare", dump("ref"), dump("aten"), "--precision", "fp8"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--precision: unknown profile 'fp8'"), std::string::npos) << r.err;
}

// The precision profiles end to end: conv2d computed on TF32 inputs at every layer fails under
// the default profile with the TF32 hint, and passes under --precision tf32.
TEST_F(CompareCli, Tf32RunFailsUnderFp32AndPassesUnderTf32) {
  auto r = run_parity({"bisect", dump("aten"), dump("faulty:tf32"), "--json", dir_->file("tf32.json")});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(r.out.rfind("origin: model.0.conv (layer 0, conv2d)", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("consistent with TF32 inputs (torch.backends.cudnn.allow_tf32"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(test::read_text(dir_->file("tf32.json")));
  int convs = 0;
  for (const auto& l : j["layers"]) {
    if (l["op"] != "conv2d") continue;
    ++convs;
    // Every conv is an origin with B defective, and B's own effective precision reads TF32's.
    EXPECT_EQ(l["defective"], "B") << l["name"];
    EXPECT_EQ(l["outputs"][0]["precision_of"], "B") << l["name"];
    const double bits = l["effective_bits"].get<double>();
    EXPECT_GE(bits, 9.5) << l["name"];
    EXPECT_LE(bits, 11.5) << l["name"];
  }
  EXPECT_GT(convs, 50);
  // Swapped, the same layer with A defective.
  r = run_parity({"bisect", dump("faulty:tf32"), dump("aten")});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(r.out.rfind("origin: model.0.conv (layer 0, conv2d)\n  defective: A\n", 0), 0u) << r.out;
  r = run_parity({"compare", dump("aten"), dump("faulty:tf32"), "--precision", "tf32"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("judge ref, precision tf32"), std::string::npos) << r.out;
}

// A tensor changed on disk behind its manifest's back is a corrupt dump, never "identical".
// An atol beyond float32's range makes every excess -inf in the vectorised pass, so no chunk of
// a streamed output raises the largest excess: the worst element is still found (in the first
// chunk), not asked of a chunk no longer at hand. Every float layer then passes.
TEST_F(CompareCli, AtolBeyondFloat32RangeGivesAVerdict) {
  const auto r = test::run_process({PARITY_CLI, "compare", dump("ref"), dump("aten"), "--atol", "1e39", "--rtol", "0", "--failed"});
  EXPECT_NE(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.err.find("internal"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("passed"), std::string::npos) << r.out;
}

TEST_F(CompareCli, TamperedFileIsCorrupt) {
  namespace fs = std::filesystem;
  fs::copy(dump("ref"), dir_->file("tampered"), fs::copy_options::recursive);
  std::string victim;
  for (const auto& e : fs::directory_iterator(dir_->file("tampered"))) {
    if (e.path().filename().string().find("model.10.conv.out0") != std::string::npos) victim = e.path().string();
  }
  ASSERT_FALSE(victim.empty());
  std::string bytes = test::read_text(victim);
  bytes[bytes.size() - 2] ^= 0x01;  // one bit of the last element's data, header untouched
  test::write_bytes(victim, bytes);
  // Against the same content (both sides hashed, nothing else read) and against a dump whose
  // bytes differ (each side read whole once, hashed as it is read): caught either way, in
  // either order.
  for (const auto& [a, b] : std::vector<std::pair<std::string, std::string>>{{dump("ref"), dir_->file("tampered")},
                                                                            {dump("aten"), dir_->file("tampered")},
                                                                            {dir_->file("tampered"), dump("aten")}}) {
    const auto r = run_parity({"compare", a, b});
    EXPECT_EQ(r.exit_code, 3) << a << " " << b << "\n" << r.out;
    EXPECT_NE(r.err.find(victim), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("corrupt"), std::string::npos) << r.err;
  }
}

// One file listed twice (an output, then a later layer's input), the later entry's hash rewritten
// to the other dump's: the file is hashed once, for the first entry, and the second entry's
// record is still checked against that hash, so the dump is corrupt on every run. On one thread
// the output entry is always checked first.
TEST_F(CompareCli, EveryEntryListingAFileIsChecked) {
  namespace fs = std::filesystem;
  fs::copy(dump("aten"), dir_->file("relisted"), fs::copy_options::recursive);
  const auto ref = nlohmann::json::parse(test::read_text(dump("ref") + "/manifest.json"));
  auto m = nlohmann::json::parse(test::read_text(dir_->file("relisted/manifest.json")));
  std::string file;
  for (size_t i = 0; i < m["layers"].size() && file.empty(); ++i) {
    const auto& out = m["layers"][i]["outputs"][0];
    if (out["hash"] == ref["layers"][i]["outputs"][0]["hash"]) continue;  // the same bytes on both sides
    for (size_t j = i + 1; j < m["layers"].size() && file.empty(); ++j) {
      for (size_t k = 0; k < m["layers"][j]["inputs"].size(); ++k) {
        auto& in = m["layers"][j]["inputs"][k];
        if (in["file"] != out["file"] || !file.empty()) continue;
        file = in["file"].get<std::string>();
        in["hash"] = ref["layers"][i]["outputs"][0]["hash"];
      }
    }
  }
  ASSERT_FALSE(file.empty());
  test::write_bytes(dir_->file("relisted/manifest.json"), m.dump(1));
  for (const char* threads : {"PARITY_NUM_THREADS=1", "PARITY_NUM_THREADS=2", "PARITY_NUM_THREADS=2"}) {
    const auto r = test::run_process({"/usr/bin/env", threads, PARITY_CLI, "compare", dump("ref"), dir_->file("relisted")});
    EXPECT_EQ(r.exit_code, 3) << threads << "\n" << r.out;
    EXPECT_NE(r.err.find(file), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("corrupt"), std::string::npos) << r.err;
  }
}

// A same-content pair where one input entry (a conv's input, which is its producer's output
// file) records a hash its bytes do not have: no layer differs, nothing is judged locally, and
// the entry's recorded hash differs from the other side's, so no read is needed to tell that
// the inputs differ; the entry is still checked (Dump::check_owed), and the dump is corrupt.
TEST_F(CompareCli, InputEntryOfAnIdenticalLayerIsChecked) {
  namespace fs = std::filesystem;
  fs::copy(dump("ref"), dir_->file("misrecorded"), fs::copy_options::recursive);
  auto m = nlohmann::json::parse(test::read_text(dir_->file("misrecorded/manifest.json")));
  std::string file;
  for (auto& layer : m["layers"]) {
    if (layer["op"] != "conv2d" || layer["inputs"][0]["source"].is_null()) continue;
    file = layer["inputs"][0]["file"].get<std::string>();
    layer["inputs"][0]["hash"] = "xxh3:0123456789abcdef";
    break;
  }
  ASSERT_FALSE(file.empty());
  test::write_bytes(dir_->file("misrecorded/manifest.json"), m.dump(1));
  for (const auto& [a, b] : std::vector<std::pair<std::string, std::string>>{{dump("ref"), dir_->file("misrecorded")},
                                                                            {dir_->file("misrecorded"), dump("ref")}}) {
    const auto r = test::run_process({PARITY_CLI, "compare", a, b});
    EXPECT_EQ(r.exit_code, 3) << r.out;
    EXPECT_NE(r.err.find(file), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("corrupt"), std::string::npos) << r.err;
  }
}

// Layers of the same name pair by occurrence: two identical replays of a file that repeats a
// name pass.
TEST_F(CompareCli, RepeatedNamesPairByOccurrence) {
  test::write_bytes(dir_->file("twice.cases"), "silu x=4x5 name=a\nsilu x=7x3 name=a\n");
  for (const char* d : {"rep1", "rep2"}) {
    const auto r = run_parity({"replay", dir_->file("twice.cases"), "--backend", "ref", "--vs", "aten", "--dump", dir_->file(d)});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  auto r = run_parity({"compare", dir_->file("rep1/a"), dir_->file("rep2/a")});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("2 layers: 2 passed"), std::string::npos) << r.out;
  r = run_parity({"compare", dir_->file("rep1/a"), dir_->file("rep1/b")});
  EXPECT_EQ(r.exit_code, 0) << r.out;
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

// The table rows of a report: the lines between the column header and the summary that begin
// with a state (continuation lines of wrapped notes begin with spaces).
std::vector<std::string> table_rows(const std::string& out) {
  std::vector<std::string> rows;
  bool in_table = false;
  for (const std::string& line : test::lines_of(out)) {
    if (line.rfind("state ", 0) == 0) {
      in_table = true;
    } else if (line.find(" layers: ") != std::string::npos) {
      in_table = false;
    } else if (in_table && !line.empty() && line[0] != ' ' && line.rfind("PROPAGATED: ", 0) != 0) {  // not the legend
      rows.push_back(line);
    }
  }
  return rows;
}

// --failed keeps the rows that did not pass; --top K ranks by error over tolerance, which the
// test recomputes from the JSON report's own fields (worst element against its tolerance).
TEST_F(CompareCli, FailedAndTopPickTheRowsThatMatter) {
  auto r = run_parity({"compare", dump("ref"), dump("faulty:bias:4"), "--failed", "--json", dir_->file("f.json")});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const auto j = nlohmann::json::parse(test::read_text(dir_->file("f.json")));
  size_t not_passed = 0;
  for (const auto& l : j["layers"]) not_passed += l["state"] != "PASSED";
  ASSERT_GT(not_passed, 0u);
  const auto rows = table_rows(r.out);
  EXPECT_EQ(rows.size(), not_passed) << r.out;
  for (const std::string& row : rows) EXPECT_NE(row.rfind("PASSED", 0), 0u) << row;
  EXPECT_NE(r.out.find("157 layers: "), std::string::npos) << r.out;  // the summary still counts all

  r = run_parity({"compare", dump("ref"), dump("aten"), "--top", "3", "--json", dir_->file("t.json")});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  std::vector<std::pair<double, std::string>> ranked;
  const auto report = nlohmann::json::parse(test::read_text(dir_->file("t.json")));
  for (const auto& l : report["layers"]) {
    double e = 0;
    for (const auto& o : l["outputs"]) {
      if (o["identical"].get<bool>() || !o["tolerance_at_worst"].is_number() || o["tolerance_at_worst"].get<double>() <= 0) continue;
      e = std::max(e, std::fabs(o["worst_a"].get<double>() - o["worst_b"].get<double>()) / o["tolerance_at_worst"].get<double>());
    }
    ranked.push_back({e, l["name"].get<std::string>()});
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  const auto top = table_rows(r.out);
  ASSERT_EQ(top.size(), 3u) << r.out;
  EXPECT_NE(r.out.find("err/tol"), std::string::npos) << r.out;
  for (size_t i = 0; i < 3; ++i) EXPECT_NE(top[i].find("  " + ranked[i].second), std::string::npos) << i << ": " << top[i];

  // bisect shows the same views before naming the origin.
  r = run_parity({"bisect", dump("ref"), dump("faulty:bias:4"), "--top", "1"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  ASSERT_EQ(table_rows(r.out).size(), 1u) << r.out;
  EXPECT_NE(r.out.find("origin: model.2.m.0.cv1.conv (layer 6, conv2d)"), std::string::npos) << r.out;
  // Whatever --top ranks higher (post-processing rows whose counts differ are infinitely off),
  // the origin's row comes first: it is the answer.
  r = run_parity({"compare", dump("ref"), dump("faulty:bias:4"), "--top", "2"});
  const auto picked = table_rows(r.out);
  ASSERT_EQ(picked.size(), 2u) << r.out;
  EXPECT_EQ(picked[0].rfind("FAILED*", 0), 0u) << r.out;
  EXPECT_NE(picked[0].find("model.2.m.0.cv1.conv"), std::string::npos) << r.out;
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"compare", dump("ref"), dump("aten"), "--top", "0"}, {"bisect", dump("ref"), dump("aten"), "--top", "-2"}}) {
    const auto b = run_parity(bad);
    EXPECT_EQ(b.exit_code, 3) << b.out;
    EXPECT_NE(b.err.find("--top"), std::string::npos) << b.err;
  }
}

// Notes longer than the terminal go on indented lines of their own under the row; piped
// output without COLUMNS keeps one line per row.
TEST_F(CompareCli, LongNotesWrapUnderTheRow) {
  const auto piped = run_parity({"compare", dump("ref"), dump("faulty:bias:4"), "--failed"});
  const auto wide = run_process({"/usr/bin/env", "COLUMNS=100", PARITY_CLI, "compare", dump("ref"), dump("faulty:bias:4"), "--failed"});
  EXPECT_EQ(wide.exit_code, 1) << wide.err;
  size_t continuation = 0;
  for (const std::string& line : test::lines_of(wide.out)) {
    if (line.rfind("      ", 0) != 0) continue;
    ++continuation;
    EXPECT_LE(line.size(), 100u) << line;
  }
  EXPECT_GT(continuation, 0u) << wide.out;
  for (const std::string& line : test::lines_of(piped.out)) EXPECT_NE(line.rfind("      ", 0), 0u) << line;
  // The same words either way.
  auto words = [](const std::string& s) {
    std::istringstream in(s);
    std::vector<std::string> w;
    for (std::string x; in >> x;) w.push_back(x);
    return w;
  };
  EXPECT_EQ(words(piped.out), words(wide.out));
}

// Two .npy files: one verdict under the dtype's default, --atol/--rtol, or a call's own
// tolerance (conv2d's bound from its inputs).
TEST_F(CompareCli, TwoNpyFiles) {
  const auto manifest = nlohmann::json::parse(test::read_text(dump("ref") + "/manifest.json"));
  auto layer = [&](const std::string& name) {
    for (const auto& l : manifest["layers"]) {
      if (l["name"] == name) return l;
    }
    ADD_FAILURE() << name;
    return nlohmann::json();
  };
  const auto conv = layer("model.2.m.0.cv1.conv");
  auto file = [&](const char* side, const nlohmann::json& t) { return dump(side) + "/" + t["file"].get<std::string>(); };
  std::vector<std::string> inputs;
  for (const auto& t : conv["inputs"]) inputs.push_back(file("ref", t));
  const std::string params = conv["params"], out_ref = file("ref", conv["outputs"][0]);
  auto with_op = [&](const char* side) {
    std::vector<std::string> args = {"compare", out_ref, file(side, conv["outputs"][0]), "--op", params, "--inputs"};
    args.insert(args.end(), inputs.begin(), inputs.end());
    return run_parity(args);
  };
  // LibTorch's conv on the same inputs is within the bound; the planted bias defect is not.
  auto r = with_op("aten");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("PASSED: max abs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("per-element bound (conv2d)"), std::string::npos) << r.out;
  r = with_op("faulty:bias:4");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("FAILED: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("elements out of tolerance, worst at ["), std::string::npos) << r.out;
  // Zero tolerance: a float64-accumulated and a float32 conv differ somewhere.
  r = run_parity({"compare", out_ref, file("aten", conv["outputs"][0]), "--atol", "0", "--rtol", "0", "--json", dir_->file("n.json")});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const auto j = nlohmann::json::parse(test::read_text(dir_->file("n.json")));
  EXPECT_EQ(j["state"], "FAILED");
  EXPECT_GT(j["out_of_tolerance"].get<int64_t>(), 0);
  // Another shape is structural; bad flags and files are one line, exit 3.
  r = run_parity({"compare", out_ref, inputs[1]});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"compare", out_ref, out_ref, "--op", params},
           {"compare", out_ref, out_ref, "--op", "conv2d x=1"},
           {"compare", out_ref, out_ref, "--inputs", inputs[0]},
           {"compare", out_ref, out_ref, "--op", params, "--inputs", inputs[1], inputs[0], inputs[2]},
           {"compare", out_ref, dir_->file("missing.npy")},
           {"compare", out_ref, out_ref, "--html", dir_->file("x.html")},
           {"compare", dump("ref"), dump("aten"), "--op", "silu x=1"}}) {
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
  EXPECT_NE(r.out.find("FAILED      conv2d/pointwise  conv2d x=2x32x9x9 w=32x32x1x1 bias"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("defective: B"), std::string::npos) << r.out;
  // Degenerate expected outputs are counted as MISTRUSTED, in golden too.
  EXPECT_NE(r.out.find("MISTRUSTED  yolov5n_128/nms.0.multi_label.nonzero"), std::string::npos) << r.out;
  test::TempDir dir;
  std::filesystem::copy(golden, dir.file("golden"), std::filesystem::copy_options::recursive);
  r = run_parity({"golden", "update", "--root", dir.file("golden")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* pack : {"conv2d", "silu", "cat", "nonzero", "index", "nms", "yolov5n_128", "fp16"}) {
    EXPECT_NE(r.out.find(std::string(pack) + ": 0 of "), std::string::npos) << pack << "\n" << r.out;
    // Nothing moved: the pack's files are the checked-in ones, byte for byte (no rewrite to review).
    EXPECT_EQ(test::read_text(dir.file("golden/" + std::string(pack) + "/manifest.json")),
              test::read_text(golden + "/" + std::string(pack) + "/manifest.json"))
        << pack;
  }
  EXPECT_NE(r.out.find("8 unchanged packs kept as they are"), std::string::npos) << r.out;
  EXPECT_EQ(run_parity({"golden", "check", "--root", dir.file("nowhere")}).exit_code, 3);
  // Without --root, from a folder without packs (the build tree's, whose golden/ holds the
  // library's objects), the source tree's packs.
  r = run_parity({"golden", "check", "--pack", "silu"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("silu "), std::string::npos) << r.out;
  EXPECT_EQ(run_parity({"golden", "check", "--root", golden, "--pack", "resnet"}).exit_code, 3);
}

}  // namespace
}  // namespace parity
