// A corpus of hostile dumps, built here (a FIFO or a link cannot be checked in), through the
// binary: each is refused with exit 3 and one line naming what is wrong, at once (a FIFO is never
// waited on, /dev/zero never read), or compared with its names shown escaped. docs/HARDENING.md.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "core/npy.h"
#include "core/tensor.h"
#include "support/test_support.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::run_parity;

// A one-layer dump: silu x=2x3 with its input and output, `edit` changing the manifest first.
std::string silu_dump(const test::TempDir& tmp, const std::string& name, const std::function<void(json&)>& edit = nullptr) {
  const std::string dir = tmp.file(name);
  fs::create_directories(dir);
  Tensor x(DType::Float32, Shape{2, 3}), y(DType::Float32, Shape{2, 3});
  for (int i = 0; i < 6; ++i) {
    const float v = float(i - 3) / 3.0f;
    x.mutable_data<float>()[i] = v;
    y.mutable_data<float>()[i] = v / (1.0f + std::exp(-v));
  }
  write_npy(dir + "/x.npy", x);
  write_npy(dir + "/y.npy", y);
  json m = {{"format", "parity-dump"},
            {"version", 1},
            {"layers", json::array({{{"name", "l0"}, {"op", "silu"}, {"params", "silu x=2x3"}, {"inputs", json::array({{{"file", "x.npy"}}})},
                                     {"outputs", json::array({{{"file", "y.npy"}}})}}})}};
  if (edit) edit(m);
  test::write_bytes(dir + "/manifest.json", m.dump());
  return dir;
}

// Exit 3, one line on stderr holding `needle`, and no byte of a terminal escape.
void expect_refused(const std::vector<std::string>& args, const std::string& needle) {
  test::ProcessOptions never_hang;
  never_hang.kill_after_ms = 60000;
  const auto r = run_parity(args, never_hang);
  EXPECT_FALSE(never_hang.killed) << "still running after 60 s: " << args.back();
  EXPECT_EQ(r.exit_code, 3) << args.back() << "\nstdout: " << r.out << "\nstderr: " << r.err;
  EXPECT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << "expected \"" << needle << "\" in: " << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
}

class HostileDump : public ::testing::Test {
 protected:
  test::TempDir tmp_;
  std::string good_ = silu_dump(tmp_, "good");
};

TEST_F(HostileDump, DeepNestingIsRefusedBeforeParsing) {
  const std::string dir = silu_dump(tmp_, "deep");
  std::string text = test::read_text(dir + "/manifest.json");
  // 100,000 levels under "run", which takes any keys: used to overflow the stack when printed back.
  text.insert(1, "\"run\": {\"k\": " + std::string(100000, '[') + std::string(100000, ']') + "}, ");
  test::write_bytes(dir + "/manifest.json", text);
  expect_refused({"compare", good_, dir}, "nested deeper than 64 levels");
  const std::string tol = tmp_.file("tol.json");
  test::write_bytes(tol, "{\"x\": " + std::string(5000, '[') + std::string(5000, ']') + "}");
  expect_refused({"compare", good_, good_, "--tol-file", tol}, "nested deeper than 64 levels");
}

TEST_F(HostileDump, ListedFilesMustBeRegularFilesInsideTheDump) {
  const std::string fifo = silu_dump(tmp_, "fifo");
  fs::remove(fifo + "/y.npy");
  ASSERT_EQ(::mkfifo((fifo + "/y.npy").c_str(), 0644), 0);
  expect_refused({"compare", good_, fifo}, "is a FIFO, not a regular file");

  const std::string zero = silu_dump(tmp_, "zero");
  fs::remove(zero + "/manifest.json");
  fs::create_symlink("/dev/zero", zero + "/manifest.json");
  expect_refused({"compare", good_, zero}, "link leading out of the dump folder");

  const std::string folder = silu_dump(tmp_, "folder");
  fs::remove(folder + "/manifest.json");
  fs::create_directory(folder + "/manifest.json");
  expect_refused({"compare", good_, folder}, "is a folder, not a regular file");

  const std::string out = silu_dump(tmp_, "out");
  fs::remove(out + "/y.npy");
  fs::create_symlink(good_ + "/y.npy", out + "/y.npy");
  expect_refused({"compare", good_, out}, "link leading out of the dump folder");

  // A link to a file of the same dump is that file.
  const std::string inside = silu_dump(tmp_, "inside");
  fs::rename(inside + "/y.npy", inside + "/y_real.npy");
  fs::create_symlink("y_real.npy", inside + "/y.npy");
  EXPECT_EQ(run_parity({"compare", good_, inside}).exit_code, 0);

  const std::string cases = tmp_.file("fifo.cases");
  ASSERT_EQ(::mkfifo(cases.c_str(), 0644), 0);
  expect_refused({"cases", "check", cases}, "is a FIFO, not a regular file");
}

TEST_F(HostileDump, NamesAreShownEscaped) {
  // As JSON escapes (ESC, BEL, newline), and a C1 control (NEL) as raw UTF-8.
  const std::string evil = "l0\\u001b[2J\\u001b]0;title\\u0007\\nsecond line \xc2\x85";
  const auto named = [&](const std::string& name) {
    const std::string dir = silu_dump(tmp_, name, [](json& m) { m["layers"][0]["name"] = "EVIL"; });
    std::string text = test::read_text(dir + "/manifest.json");
    text.replace(text.find("EVIL"), 4, evil);
    test::write_bytes(dir + "/manifest.json", text);
    return dir;
  };
  const std::string a = named("a"), b = named("b");
  const std::string report = tmp_.file("r.json"), page = tmp_.file("r.html");
  const auto r = run_parity({"compare", a, b, "--all", "--json", report, "--html", page});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string shown = "l0\\x1b[2J\\x1b]0;title\\x07\\x0asecond line \\u0085";
  EXPECT_NE(r.out.find(shown), std::string::npos) << r.out;
  for (const std::string& text : {r.out, r.err, test::read_text(report), test::read_text(page)}) {
    EXPECT_EQ(text.find('\x1b'), std::string::npos);
    EXPECT_EQ(text.find('\x07'), std::string::npos);
  }
  EXPECT_EQ(json::parse(test::read_text(report))["layers"][0]["name"], shown);
  // A manifest that is not UTF-8 is not JSON: refused, the byte shown escaped.
  const std::string c = named("c");
  std::string text = test::read_text(c + "/manifest.json");
  text.replace(text.find("\xc2\x85"), 2, "\xff");
  test::write_bytes(c + "/manifest.json", text);
  expect_refused({"compare", a, c}, "\\xff");
}

// A control byte is shown as \x01, and the four characters \x01 as \\x01: two layers so named
// stay two layers (found by a review: they used to pair, and compare passed).
TEST_F(HostileDump, EscapedNamesStayDistinct) {
  const std::string a = silu_dump(tmp_, "a", [](json& m) { m["layers"][0]["name"] = "act\x01"; });
  const std::string b = silu_dump(tmp_, "b", [](json& m) { m["layers"][0]["name"] = "act\\x01"; });
  const auto r = run_parity({"compare", a, b});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("act\\x01   missing in B"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("act\\\\x01  missing in A"), std::string::npos) << r.out;
}

TEST_F(HostileDump, FieldsAreCheckedAndNamed) {
  const std::string neg = silu_dump(tmp_, "neg", [](json& m) { m["layers"][0]["index"] = -5; });
  expect_refused({"compare", good_, neg}, "\"index\": negative (-5)");
  // A NUL in a file name: the whole message, with the NUL shown, not cut at it.
  const std::string nul = silu_dump(tmp_, "nul", [](json& m) { m["layers"][0]["outputs"][0]["file"] = std::string("y\0.npy", 6); });
  expect_refused({"compare", good_, nul}, "\"y\\x00.npy\" is not a plain file name in the dump folder");
  const std::string long_name = silu_dump(tmp_, "long", [](json& m) { m["layers"][0]["name"] = std::string(5000, 'n'); });
  expect_refused({"compare", good_, long_name}, "\"name\": longer than 4096 bytes");
}

// A report path that cannot be written is refused before any dump is read: the table is not
// printed and then the verdict's exit code lost to the write's error.
TEST_F(HostileDump, ReportPathsAreCheckedFirst) {
  for (const char* flag : {"--json", "--csv", "--html"}) {
    const auto r = run_parity({"compare", good_, good_, flag, "/nonexistent/folder/report"});
    EXPECT_EQ(r.exit_code, 3) << flag << r.err;
    EXPECT_TRUE(r.out.empty()) << flag << r.out;
    EXPECT_NE(r.err.find(std::string(flag) + " /nonexistent/folder/report: folder /nonexistent/folder does not exist"), std::string::npos) << r.err;
  }
  const auto folder = run_parity({"compare", good_, good_, "--json", tmp_.path()});
  EXPECT_EQ(folder.exit_code, 3);
  EXPECT_NE(folder.err.find("is a folder, not a file"), std::string::npos) << folder.err;
}

TEST_F(HostileDump, EmptyDumpsSayWhyNothingWasChecked) {
  const auto edit = [](json& m) { m["layers"] = json::array(); };
  const std::string a = silu_dump(tmp_, "a", edit), b = silu_dump(tmp_, "b", edit);
  const auto r = run_parity({"compare", a, b});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.out.find("nothing checked: neither dump holds a layer"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("--layers"), std::string::npos) << r.out;
}

// A call line that cannot give the output the dump holds (conv2d with the module's padding
// where the module padded first, as timm's Conv2dSame does): a structural verdict naming the
// side, never a read outside the inputs.
TEST_F(HostileDump, CallLineThatCannotMakeItsOutputIsStructural) {
  const auto conv = [&](const std::string& name, int64_t out_hw) {
    const std::string dir = tmp_.file(name);
    fs::create_directories(dir);
    Tensor x(DType::Float32, Shape{1, 2, 5, 5}), w(DType::Float32, Shape{3, 2, 3, 3}), y(DType::Float32, Shape{1, 3, out_hw, out_hw});
    for (int64_t i = 0; i < x.numel(); ++i) x.mutable_data<float>()[i] = float(i % 7) / 7.0f;
    for (int64_t i = 0; i < w.numel(); ++i) w.mutable_data<float>()[i] = float(i % 5) / 5.0f - 0.4f;
    for (int64_t i = 0; i < y.numel(); ++i) y.mutable_data<float>()[i] = float(i % 3);
    write_npy(dir + "/x.npy", x), write_npy(dir + "/w.npy", w), write_npy(dir + "/y.npy", y);
    const json m = {{"format", "parity-dump"},
                    {"version", 1},
                    {"layers", json::array({{{"name", "conv"}, {"op", "conv2d"}, {"params", "conv2d x=1x2x5x5 w=3x2x3x3"},
                                             {"inputs", json::array({{{"file", "x.npy"}}, {{"file", "w.npy"}}})},
                                             {"outputs", json::array({{{"file", "y.npy"}}})}}})}};
    test::write_bytes(dir + "/manifest.json", m.dump());
    return dir;
  };
  const std::string a = conv("a", 5), b = conv("b", 5);  // the line gives 3x3, the dumps hold 5x5
  const auto r = run_parity({"compare", a, b, "--json", tmp_.file("r.json")});
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 2) << r.err;  // identical bytes pass; never a crash
  const std::string c = conv("c", 5);
  Tensor other(DType::Float32, Shape{1, 3, 5, 5});
  write_npy(c + "/y.npy", other);
  const auto d = run_parity({"compare", a, c});
  EXPECT_EQ(d.exit_code, 2) << d.out << d.err;
  EXPECT_NE(d.out.find("A is not the judge's on A's own inputs: out0: judge is float32 1x3x3x3, A is float32 1x3x5x5"), std::string::npos)
      << d.out;
}

// The same for a torch call, whose line LibTorch runs again: a line saying one shape where the
// file holds another is refused before LibTorch or a bound reads either, and the layer says why.
TEST_F(HostileDump, TorchCallLineIsCheckedAgainstItsTensors) {
  const auto mul = [&](const std::string& name, float scale) {
    const std::string dir = tmp_.file(name);
    fs::create_directories(dir);
    Tensor x(DType::Float32, Shape{3, 2}), y(DType::Float32, Shape{3, 2});
    for (int64_t i = 0; i < 6; ++i) x.mutable_data<float>()[i] = float(i), y.mutable_data<float>()[i] = scale * float(i);
    write_npy(dir + "/x.npy", x), write_npy(dir + "/y.npy", y);
    const json m = {{"format", "parity-dump"},
                    {"version", 1},
                    {"layers", json::array({{{"name", "scale"}, {"op", "torch.Tensor.mul"}, {"params", "torch.Tensor.mul in0=2x3 arg1=2.0"},
                                             {"inputs", json::array({{{"file", "x.npy"}}})},
                                             {"outputs", json::array({{{"file", "y.npy"}}})}}})}};
    test::write_bytes(dir + "/manifest.json", m.dump());
    return dir;
  };
  const auto r = run_parity({"compare", mul("a", 2), mul("b", 3), "--all"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("tensor 0 (in0) is 2x3 in the line, its file holds 3x2"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace parity
