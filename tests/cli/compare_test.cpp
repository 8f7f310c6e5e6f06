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
  EXPECT_NE(r.out.find("0 failed (0 structural), 0 mistrusted, 0 unchecked"), std::string::npos) << r.out;
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

// Dumps of another image size share no call, and dumps of another model are not comparable:
// one line saying so, exit 2, not a row per layer.
TEST_F(CompareCli, DumpsOfOtherModelsOrShapesSayItInOneLine) {
  const std::string other_img = dir_->file("d-ref-160"), other_model = dir_->file("d-ref-s");
  ASSERT_EQ(run_parity({"run", "yolov5n", "--img", "160", "--dump", other_img}).exit_code, 0);
  ASSERT_EQ(run_parity({"run", "yolov5s", "--img", "192", "--dump", other_model}).exit_code, 0);
  for (const char* cmd : {"compare", "bisect"}) {
    auto r = run_parity({cmd, dump("ref"), other_img});
    EXPECT_EQ(r.exit_code, 2) << cmd << ": " << r.out;
    EXPECT_NE(r.out.find("A is yolov5n on ref, B is yolov5n on ref: 0 of 157 layers in A run the same call in B"), std::string::npos)
        << cmd << ": " << r.out;
    EXPECT_NE(r.out.find("x=1x3x192x192"), std::string::npos) << r.out;  // the first calls, side by side
    EXPECT_EQ(r.out.find("ran another call"), std::string::npos) << cmd << ": " << r.out;
    r = run_parity({cmd, dump("ref"), other_model});
    EXPECT_EQ(r.exit_code, 2) << cmd << ": " << r.out;
    EXPECT_NE(r.out.find("A is yolov5n on ref, B is yolov5s on ref: different models, "), std::string::npos) << cmd << ": " << r.out;
    EXPECT_EQ(r.out.find("propagated from"), std::string::npos) << cmd << ": " << r.out;
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
    EXPECT_NE(plot_layer_of_row(html, sort).find("class='pt struct s-failed'"), std::string::npos) << plot_layer_of_row(html, sort);
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
  const auto r = run_parity({"compare", dump("ref"), dir_->file("tampered")});
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.err.find(victim), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("corrupt"), std::string::npos) << r.err;
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
  for (const char* pack : {"conv2d", "silu", "cat", "nonzero", "index", "nms", "yolov5n_128"}) {
    EXPECT_NE(r.out.find(std::string(pack) + ": 0 of "), std::string::npos) << pack << "\n" << r.out;
  }
  EXPECT_EQ(run_parity({"golden", "check", "--root", dir.file("nowhere")}).exit_code, 3);
  EXPECT_EQ(run_parity({"golden", "check", "--root", golden, "--pack", "resnet"}).exit_code, 3);
}

}  // namespace
}  // namespace parity
