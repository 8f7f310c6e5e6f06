// The `parity` binary: subcommands, help, exit codes, one-line errors.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace parity {
namespace {

using test::run_parity;

const char* const kSubcommands[] = {"cases", "replay", "run", "compare", "bisect", "inspect", "golden", "bench"};

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

TEST(Cli, PlannedSubcommandsSayNotBuiltYet) {
  for (const char* sub : {"cases", "replay", "run", "compare", "bisect", "golden"}) {
    const auto r = run_parity({sub, "anything", "--flag"});
    EXPECT_EQ(r.exit_code, 3) << sub;
    EXPECT_NE(r.err.find("not built yet"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace parity
