// The `parity` binary: subcommands, help, exit codes, one-line errors.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/npy.h"
#include "core/tensor.h"
#include "support/test_support.h"

namespace parity {
namespace {

using test::run_parity;

const char* const kSubcommands[] = {"cases", "replay", "run", "compare", "bisect", "inspect", "golden", "bench", "diff-report"};

TEST(Cli, HelpListsEverySubcommand) {
  const auto r = run_parity({"--help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* sub : kSubcommands) EXPECT_NE(r.out.find(sub), std::string::npos) << sub;
  EXPECT_NE(r.out.find("Exit codes"), std::string::npos);
}

TEST(Cli, EverySubcommandHasHelp) {
  for (const char* sub : kSubcommands) {
    const auto r = run_parity({sub, "--help"});
    EXPECT_EQ(r.exit_code, 0) << sub << ": " << r.err;
    EXPECT_NE(r.out.find(sub), std::string::npos) << r.out;
  }
}

TEST(Cli, VersionShowsBuildAndGpu) {
  const auto r = run_parity({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("parity ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("GPU: "), std::string::npos) << r.out;
}

TEST(Cli, UsageErrorsExitThreeOnOneLine) {
  const std::vector<std::vector<std::string>> bad = {
      {},                                 // no subcommand
      {"frobnicate"},                     // unknown subcommand
      {"inspect"},                        // missing path
      {"inspect", "--bogus", "x.npy"},    // unknown flag
      {"inspect", "--values", "-2", "x.npy"},
      {"inspect", "/nonexistent/x.npy"},  // missing file
  };
  for (const auto& args : bad) {
    const auto r = run_parity(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(r.exit_code, 3) << joined << r.err;
    EXPECT_EQ(test::lines_of(r.err).size(), 1u) << joined << "stderr: " << r.err;
    EXPECT_TRUE(r.out.empty()) << joined << r.out;
  }
}

// Each slip a newcomer makes gets one line on stderr, exit 3, naming the thing and saying what it
// is: a path that does not exist, a file where a folder is expected, a tensor or a folder where a
// case file is, a misspelt flag (with the flag meant), a planted defect on a call the run never
// makes (and no manifest left looking complete).
TEST(Cli, SlipsAreNamedPlainly) {
  test::TempDir tmp;
  const std::string npy = tmp.file("x.npy"), folder = tmp.file("folder"), text = tmp.file("notes.txt");
  write_npy(npy, Tensor(DType::Float32, Shape({2})));
  std::filesystem::create_directories(folder);
  std::filesystem::create_directories(tmp.file("killed"));  // a dump whose run was killed: files, no manifest
  write_npy(tmp.file("killed/0000.model.0.conv.x.npy"), Tensor(DType::Float32, Shape({2})));
  test::write_bytes(text, "hello\n");
  struct Slip {
    std::vector<std::string> args;
    std::string says;
  };
  for (const Slip& s : std::vector<Slip>{
           {{"compare", tmp.file("nosuch"), folder}, "nosuch: does not exist"},
           {{"compare", text, folder}, "notes.txt: not a folder: a dump is a folder holding manifest.json"},
           {{"replay", npy}, "x.npy: a .npy tensor, not a case file"},
           {{"replay", folder}, "folder: a folder, not a case file"},
           {{"replay", tmp.file("nosuch.cases")}, "nosuch.cases: no such case file"},
           {{"replay", "--case", "silu x=2 name=model.0.act", "--inputs", tmp.file("killed")}, "killed: no manifest.json: an incomplete dump"},
           {{"compare", folder, folder, "--tops", "3"}, "(did you mean --top?)"},
           {{"replay", "--case", "silu x=3", "--bakend", "ref"}, "(did you mean --backend?)"},
           {{"run", "yolov5n", "--img", "64", "--backend", "faulty:bias:9999", "--dump", tmp.file("dump")},
            "faulty:bias:9999 planted nothing: the run made "}}) {
    const auto r = run_parity(s.args);
    EXPECT_EQ(r.exit_code, 3) << s.says << ": " << r.err;
    EXPECT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find(s.says), std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(tmp.file("dump") + "/manifest.json"));
}

TEST(Cli, BenchTimesBothBackendsAndRefusesBadFlags) {
  const auto r = run_parity({"bench", "--model", "yolov5n", "--img", "64", "--op", "silu", "--filter", "^model\\.[0-2]\\.",
                             "--repeat", "1", "--warmup", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = test::lines_of(r.out);
  ASSERT_GE(lines.size(), 4u) << r.out;
  EXPECT_NE(lines[2].find("model.0.act"), std::string::npos) << r.out;
  EXPECT_EQ(lines.back().rfind("total", 0), 0u) << r.out;
  EXPECT_NE(lines.back().find("(ref / aten)"), std::string::npos) << r.out;
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"bench", "--model", "yolov9"}, {"bench", "--img", "100"}, {"bench", "--op", "conv3d"}, {"bench", "--vs", "tpu"}}) {
    const auto b = run_parity(bad);
    EXPECT_EQ(b.exit_code, 3) << bad[1];
    EXPECT_EQ(test::lines_of(b.err).size(), 1u) << b.err;
  }
}

// Issue 18: run's --backend help lists every backend; commands that give no verdict do not show
// the compare exit codes 1, 2 and 4; a usage error points at its own command's help.
TEST(Cli, HelpTextsFitTheirCommand) {
  auto help = [](const std::vector<std::string>& args) {
    const auto r = run_parity(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  const std::string run = help({"run", "--help"});
  for (const char* b : {"ref", "aten:cuda", "aten:cuda-nocudnn", "faulty:<defect>[:<n>]"}) {
    EXPECT_NE(run.find(b), std::string::npos) << b << "\n" << run;
  }
  for (const std::vector<std::string>& cmd : std::vector<std::vector<std::string>>{
           {"cases", "--help"}, {"cases", "generate", "--help"}, {"cases", "import", "--help"}, {"cases", "check", "--help"},
           {"golden", "--help"}, {"golden", "update", "--help"}}) {
    const std::string out = help(cmd);
    EXPECT_EQ(out.find("numeric mismatch"), std::string::npos) << cmd[0] << " " << cmd[1] << "\n" << out;
  }
  EXPECT_NE(help({"cases", "generate", "--help"}).find("Exit codes: 0 done, 3 usage"), std::string::npos);
  EXPECT_NE(help({"golden", "update", "--help"}).find("Exit codes: 0 done, 3 usage"), std::string::npos);
  // The checking commands keep theirs.
  EXPECT_NE(help({"golden", "check", "--help"}).find("numeric mismatch"), std::string::npos);
  EXPECT_NE(help({"compare", "--help"}).find("numeric mismatch"), std::string::npos);
  for (const auto& [args, see] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"compare"}, "(see parity compare --help)"},
           {{"cases", "generate", "--bogus"}, "(see parity cases generate --help)"},
           {{"frobnicate"}, "(see parity --help)"}}) {
    const auto r = run_parity(args);
    EXPECT_EQ(r.exit_code, 3);
    ASSERT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find(see), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace parity
