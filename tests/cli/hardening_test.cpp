// Bad input, a full disk and a killed process, through the binary: every subcommand refuses bad
// input with exit code 3 and one line naming what is wrong, and no interrupted write leaves a dump
// or golden folder that looks complete.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/test_support.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using test::run_parity;

std::string joined(const std::vector<std::string>& args) {
  std::string s;
  for (const std::string& a : args) s += a + " ";
  return s;
}

// Exit 3, exactly one line on stderr, and that line contains `needle`.
void expect_refused(const std::vector<std::string>& args, const std::string& needle) {
  const auto r = run_parity(args);
  EXPECT_EQ(r.exit_code, 3) << joined(args) << "\nstdout: " << r.out << "\nstderr: " << r.err;
  EXPECT_EQ(test::lines_of(r.err).size(), 1u) << joined(args) << "\nstderr: " << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << joined(args) << "\nexpected \"" << needle << "\" in: " << r.err;
}

void copy_folder(const std::string& from, const std::string& to) {
  fs::create_directories(to);
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
}

// The first .npy file of a dump, in name order.
std::string first_npy(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".npy") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files.at(0);
}

// Temporary files the atomic writers use are hidden and named ".<file>.tmp.<pid>.<n>".
int leftover_temporaries(const std::string& dir) {
  int n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) n += e.path().filename().string().find(".tmp.") != std::string::npos;
  return n;
}

class Hardening : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    const auto r = run_parity({"run", "yolov5n", "--img", "64", "--dump", dump()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string dump() { return dir_->file("ref"); }
  static std::string file(const std::string& name) { return dir_->file(name); }
  static test::TempDir* dir_;
};
test::TempDir* Hardening::dir_ = nullptr;

TEST_F(Hardening, MissingFilesAreRefused) {
  expect_refused({"inspect", "/nonexistent/x.npy"}, "/nonexistent/x.npy");
  expect_refused({"compare", dump(), "/nonexistent/dump"}, "/nonexistent/dump");
  expect_refused({"bisect", "/nonexistent/dump", dump()}, "/nonexistent/dump");
  expect_refused({"cases", "check", "/nonexistent.cases"}, "/nonexistent.cases");
  expect_refused({"cases", "import", "/nonexistent.json"}, "/nonexistent.json");
  expect_refused({"replay", "/nonexistent.cases"}, "/nonexistent.cases");
  expect_refused({"run", "yolov5n", "--img", "64", "--input", "/nonexistent/image.npy"}, "/nonexistent/image.npy");
  expect_refused({"run", "yolov5n", "--img", "64", "--weights", "/nonexistent/weights"}, "/nonexistent/weights");
  expect_refused({"golden", "check", "--root", "/nonexistent/golden"}, "/nonexistent/golden");
}

TEST_F(Hardening, DamagedDumpsAreRefusedByEveryReader) {
  // No manifest: an incomplete dump.
  copy_folder(dump(), file("no-manifest"));
  fs::remove(file("no-manifest/manifest.json"));
  // A manifest naming a file that is gone.
  copy_folder(dump(), file("missing-npy"));
  const std::string gone = first_npy(file("missing-npy"));
  fs::remove(gone);
  // A listed file cut short (as a full disk or a killed copy leaves it).
  copy_folder(dump(), file("truncated-npy"));
  const std::string cut = first_npy(file("truncated-npy"));
  fs::resize_file(cut, fs::file_size(cut) - 100);
  // A manifest that is not JSON, and one naming a file outside the dump.
  copy_folder(dump(), file("bad-manifest"));
  test::write_bytes(file("bad-manifest/manifest.json"), "{\"format\": \"parity-dump\", \"version\": 1, \"layers\": [");
  copy_folder(dump(), file("escaping"));
  std::string m = test::read_text(file("escaping/manifest.json"));
  const std::string first = fs::path(first_npy(file("escaping"))).filename().string();
  m.replace(m.find(first), first.size(), "../ref/" + first);
  test::write_bytes(file("escaping/manifest.json"), m);

  const std::vector<std::pair<std::string, std::string>> damaged = {
      {file("no-manifest"), "no manifest.json: an incomplete dump"},
      {file("missing-npy"), "lists a missing file"},
      {file("truncated-npy"), "truncated"},
      {file("bad-manifest"), "malformed manifest"},
      {file("escaping"), "is not a plain file name in the dump folder"},
  };
  for (const auto& [d, why] : damaged) {
    expect_refused({"compare", dump(), d}, why);
    expect_refused({"compare", d, dump()}, why);
    expect_refused({"bisect", dump(), d}, why);
  }
  // The same damage in a golden pack.
  copy_folder(std::string(PARITY_SOURCE_DIR) + "/golden/silu", file("golden/silu"));
  const std::string pack_file = first_npy(file("golden/silu"));
  fs::resize_file(pack_file, fs::file_size(pack_file) - 1);
  expect_refused({"golden", "check", "--root", file("golden")}, "truncated data");
  fs::remove(file("golden/silu/golden.json"));
  expect_refused({"golden", "check", "--root", file("golden")}, "pack without golden.json");
}

TEST_F(Hardening, BadCaseLinesNameTheirFileAndLine) {
  expect_refused({"replay", "--case", "conv3d x=1x3x8x8"}, "conv3d");
  expect_refused({"replay", "--case", "silu x=1x-3x8"}, "x=1x-3x8");
  expect_refused({"replay", "--case", "conv2d x=1x3x8x8 w=4x5x3x3"}, "conv2d");
  test::write_bytes(file("bad.cases"), "# a case file\nsilu x=1x8x4x4\nconv3d x=1x3x8x8 name=bad\n");
  expect_refused({"cases", "check", file("bad.cases")}, "bad.cases:3");
  expect_refused({"replay", file("bad.cases")}, "bad.cases:3");
  test::write_bytes(file("shape.cases"), "silu x=1x8xZx4\n");
  expect_refused({"cases", "check", file("shape.cases")}, "shape.cases:1");
}

TEST_F(Hardening, UnknownFlagsAndValuesAreRefused) {
  const std::string cases = std::string(PARITY_SOURCE_DIR) + "/cases/yolov5n.cases";
  for (const std::vector<std::string>& sub : std::vector<std::vector<std::string>>{
           {"cases", "generate"}, {"cases", "import", cases}, {"cases", "check", cases}, {"replay", cases}, {"run", "yolov5n"},
           {"compare", dump(), dump()}, {"bisect", dump(), dump()}, {"golden", "check"}, {"golden", "update"}, {"inspect", dump()},
           {"bench"}}) {
    std::vector<std::string> args = sub;
    args.push_back("--no-such-flag");
    expect_refused(args, "--no-such-flag");
  }
  expect_refused({"run", "yolov5n", "--img", "65"}, "65");
  expect_refused({"run", "yolov5n", "--batch", "0"}, "batch");
  expect_refused({"replay", "--case", "silu x=1x8", "--shard", "3/2"}, "shard");
  expect_refused({"compare", dump(), dump(), "--atol", "-1", "--rtol", "0"}, "atol");
}

TEST_F(Hardening, UnwritableOutputsAreRefusedBeforeWork) {
  // A path under a regular file cannot be created by anyone, root included.
  test::write_bytes(file("plain-file"), "x");
  const std::string under_file = file("plain-file/out");
  expect_refused({"run", "yolov5n", "--img", "64", "--dump", under_file}, under_file);
  expect_refused({"cases", "generate", "--model", "yolov5n", "--out", under_file}, under_file);
  expect_refused({"compare", dump(), dump(), "--html", under_file + "/r.html"}, under_file);
  expect_refused({"replay", "--case", "silu x=1x8", "--vs", "ref", "--json", under_file + "/r.json"}, under_file);
  expect_refused({"replay", "--case", "silu x=1x8", "--vs", "ref", "--dump", under_file}, under_file);
  expect_refused({"golden", "update", "--root", under_file}, under_file);
}

TEST_F(Hardening, ReadOnlyFoldersAreRefused) {
  if (::geteuid() == 0) {
    GTEST_SKIP() << "running as root: permission bits do not stop root, so the read-only folder case is not checked";
  }
  fs::create_directories(file("read-only"));
  fs::permissions(file("read-only"), fs::perms::owner_read | fs::perms::owner_exec);
  expect_refused({"run", "yolov5n", "--img", "64", "--dump", file("read-only/d")}, file("read-only/d"));
  expect_refused({"compare", dump(), dump(), "--json", file("read-only/r.json")}, file("read-only/r.json"));
  fs::permissions(file("read-only"), fs::perms::owner_all);
}

// RLIMIT_FSIZE stands in for a full disk: writes past it fail (EFBIG) as they would with ENOSPC.
TEST_F(Hardening, FullDiskLeavesNoCompleteLookingOutput) {
  test::ProcessOptions limited;
  limited.file_size_limit = 32 * 1024;  // the 1x3x64x64 float32 input alone is 48 KiB
  const std::string out = file("full");
  auto r = run_parity({"run", "yolov5n", "--img", "64", "--dump", out}, limited);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("File too large"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out + "/manifest.json"));
  EXPECT_EQ(leftover_temporaries(out), 0);
  expect_refused({"compare", dump(), out}, "incomplete dump");

  limited.file_size_limit = 200;  // smaller than any report
  r = run_parity({"compare", dump(), dump(), "--html", file("r.html")}, limited);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find(file("r.html")), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(file("r.html")));
  EXPECT_EQ(leftover_temporaries(dir_->path()), 0);
}

// A dump rewritten with --force and killed at points spread over the whole run is either the
// previous complete dump, the new complete dump, or refused as incomplete by every reader.
TEST_F(Hardening, KilledDumpIsNeverTorn) {
  const std::vector<std::string> seed0 = {"run", "yolov5n", "--img", "128", "--seed", "0", "--dump", file("seed0")};
  const std::vector<std::string> seed1 = {"run", "yolov5n", "--img", "128", "--seed", "1", "--dump", file("seed1")};
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(run_parity(seed0).exit_code, 0);
  const int full_ms = int(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count());
  ASSERT_EQ(run_parity(seed1).exit_code, 0);

  const std::string target = file("target");
  int incomplete = 0, previous = 0, fresh = 0;
  // From before the process gets going (the old dump must survive) to past the end (the new one).
  constexpr int kKills = 14;
  for (int k = 0; k < kKills; ++k) {
    copy_folder(file("seed1"), target);  // the previous complete state
    test::ProcessOptions kill;
    kill.kill_after_ms = full_ms * k / (kKills - 3);
    run_parity({"run", "yolov5n", "--img", "128", "--seed", "0", "--dump", target, "--force"}, kill);
    if (!fs::exists(target + "/manifest.json")) {
      ++incomplete;
      expect_refused({"compare", target, file("seed0")}, "incomplete dump");
      expect_refused({"bisect", file("seed0"), target}, "incomplete dump");
      const auto r = run_parity({"inspect", target});
      EXPECT_NE(r.out.find("no manifest.json"), std::string::npos) << r.out;
    } else {
      // Complete: it must equal one of the two runs, file for file.
      const bool is_new = run_parity({"compare", target, file("seed0")}).exit_code == 0;
      const bool is_old = run_parity({"compare", target, file("seed1")}).exit_code == 0;
      EXPECT_TRUE(is_new || is_old) << "kill after " << kill.kill_after_ms << " ms left a complete-looking dump equal to neither run";
      fresh += is_new, previous += is_old;
    }
    fs::remove_all(target);
  }
  // The old manifest goes a few milliseconds after the process starts: on a loaded machine a kill
  // at 0 ms can land after that. Kills at 0 ms again until one lands before it (or 20 tries).
  for (int k = 0; k < 20 && previous == 0; ++k) {
    copy_folder(file("seed1"), target);
    test::ProcessOptions kill;
    kill.kill_after_ms = 0;
    run_parity({"run", "yolov5n", "--img", "128", "--seed", "0", "--dump", target, "--force"}, kill);
    if (fs::exists(target + "/manifest.json")) {
      EXPECT_EQ(run_parity({"compare", target, file("seed1")}).exit_code, 0) << "a kill at 0 ms left a complete dump that is not the old one";
      previous += 1;
    }
    fs::remove_all(target);
  }
  std::printf("killed dumps: %d incomplete, %d previous, %d new (full run %d ms)\n", incomplete, previous, fresh, full_ms);
  EXPECT_GT(incomplete, 0) << "no kill landed mid-write: the test did not test";
  EXPECT_GT(previous, 0) << "no kill landed before the old manifest went";
}

// golden update killed at points over its run, and the half-swapped state built by hand: golden
// check passes (a complete set of packs) or refuses the folder; the next update finishes.
TEST_F(Hardening, KilledGoldenUpdateIsRefusedThenFinished) {
  const std::string golden = std::string(PARITY_SOURCE_DIR) + "/golden", root = file("g");
  copy_folder(golden, root);
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(run_parity({"golden", "update", "--root", root}).exit_code, 0);
  const int full_ms = int(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count());
  constexpr int kKills = 6;
  for (int k = 0; k < kKills; ++k) {
    test::ProcessOptions kill;
    kill.kill_after_ms = full_ms * (k + 1) / (kKills + 1);
    run_parity({"golden", "update", "--root", root}, kill);
    const auto r = run_parity({"golden", "check", "--root", root});
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.out << r.err;
    if (r.exit_code == 3) {
      EXPECT_NE(r.err.find("interrupted golden update"), std::string::npos) << r.err;
    }
  }
  // Mid-swap by hand: the journal written, silu moved aside, its new version not yet in place.
  ASSERT_EQ(run_parity({"golden", "update", "--root", root}).exit_code, 0);
  copy_folder(root + "/silu", root + "/.update/silu");
  fs::create_directories(root + "/.previous");
  fs::rename(root + "/silu", root + "/.previous/silu");
  test::write_bytes(root + "/.swap", "[\"silu\"]\n");
  expect_refused({"golden", "check", "--root", root}, "interrupted golden update");
  const auto r = run_parity({"golden", "update", "--root", root});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("finished the swap of an interrupted update"), std::string::npos) << r.out;
  EXPECT_EQ(run_parity({"golden", "check", "--root", root}).exit_code, 0);
  EXPECT_FALSE(fs::exists(root + "/.swap") || fs::exists(root + "/.update") || fs::exists(root + "/.previous"));
}

// Issue 18: a negative tolerance names its own flag, not the --atol/--rtol pairing rule.
TEST_F(Hardening, NegativeToleranceNamesItsFlag) {
  for (const char* cmd : {"compare", "bisect"}) {
    expect_refused({cmd, dump(), dump(), "--atol=-1", "--rtol=0"}, "--atol: must be >= 0");
    expect_refused({cmd, dump(), dump(), "--atol=0", "--rtol=-1e-3"}, "--rtol: must be >= 0");
    const auto r = run_parity({cmd, dump(), dump(), "--atol=-1", "--rtol=0"});
    EXPECT_EQ(r.err.find("go together"), std::string::npos) << r.err;
  }
  // Both given and >= 0 still runs; only one of them is still the pairing error.
  EXPECT_EQ(run_parity({"compare", dump(), dump(), "--atol=0", "--rtol=0"}).exit_code, 0);
  expect_refused({"compare", dump(), dump(), "--atol=0"}, "--atol and --rtol go together");
}

// Issue 18: --values below 1 is one short line, not CLI11's range up to DBL_MAX (300 digits).
TEST_F(Hardening, InspectValuesBelowOneIsRefusedPlainly) {
  const std::string npy = first_npy(dump());
  for (const char* n : {"-1", "0"}) {
    expect_refused({"inspect", npy, "--values", n}, "--values: must be >= 1");
    EXPECT_LT(run_parity({"inspect", npy, "--values", n}).err.size(), 120u);
  }
  EXPECT_EQ(run_parity({"inspect", npy, "--values", "1"}).exit_code, 0);
}

// Issue 18: a malformed tolerance-file entry is one line naming the file, the entry and the
// field, before any dump is read (the dumps here do not exist).
TEST_F(Hardening, ToleranceFileEntryIsCheckedBeforeDumps) {
  for (const auto& [json, says] : std::vector<std::pair<std::string, std::string>>{
           {R"({"conv2d": {"atol": 0}})", R"(entry "conv2d": missing field "rtol")"},
           {R"({"conv2d": {"rtol": 0}})", R"(entry "conv2d": missing field "atol")"},
           {R"({"conv2d": {"atol": "1e-3", "rtol": 0}})", R"(entry "conv2d": field "atol" must be a number)"}}) {
    test::write_bytes(file("tol.json"), json);
    for (const char* cmd : {"compare", "bisect"}) {
      expect_refused({cmd, "/nonexistent/a", "/nonexistent/b", "--tol-file", file("tol.json")}, says);
      const auto r = run_parity({cmd, "/nonexistent/a", "/nonexistent/b", "--tol-file", file("tol.json")});
      EXPECT_NE(r.err.find(file("tol.json")), std::string::npos) << r.err;
      EXPECT_EQ(r.err.find("json.exception"), std::string::npos) << r.err;
    }
  }
}

// Issue 18: --rerun is checked as the rerun will use it, before any dump is read, and the
// error names the flag.
TEST_F(Hardening, BisectRerunIsCheckedBeforeDumps) {
  expect_refused({"bisect", "/nonexistent/a", "/nonexistent/b", "--rerun", "bogus"}, "--rerun: unknown backend 'bogus'");
  expect_refused({"bisect", "/nonexistent/a", "/nonexistent/b", "--rerun", "faulty:zzz"}, "--rerun: backend faulty:zzz");
  expect_refused({"bisect", "/nonexistent/a", "/nonexistent/b", "--judge", "bogus"}, "--judge: unknown backend 'bogus'");
  // Identical dumps never reach the rerun: a backend that cannot run here must still be refused.
  const auto r = run_parity({"bisect", dump(), dump(), "--rerun", "cuda"});
  if (r.exit_code == 0) {
    EXPECT_NE(r.out.find("no divergence"), std::string::npos) << r.out;  // a machine where cuda runs
  } else {
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find("--rerun cuda cannot run here"), std::string::npos) << r.err;
  }
}

// Issue 18: compare --color always|never|auto; auto colours only a terminal (never this pipe).
TEST_F(Hardening, CompareColorFlag) {
  auto coloured = [](const test::RunResult& r) { return r.out.find("\033[") != std::string::npos; };
  auto r = run_parity({"compare", dump(), dump(), "--color", "always"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(coloured(r)) << r.out;
  EXPECT_FALSE(coloured(run_parity({"compare", dump(), dump(), "--color", "never"})));
  EXPECT_FALSE(coloured(run_parity({"compare", dump(), dump()})));
  expect_refused({"compare", dump(), dump(), "--color", "sometimes"}, "--color");
}

// Issue 18: NO_COLOR (https://no-color.org): any non-empty value turns auto's colour off on a
// terminal; an empty one does not, and --color always wins. script(1) gives the pty.
TEST_F(Hardening, NoColorTurnsOffAutoOnATerminal) {
  if (!fs::exists("/usr/bin/script")) GTEST_SKIP() << "no /usr/bin/script to run parity on a terminal";
  auto on_tty = [&](const std::string& env, const std::string& flags) {
    const std::string cmd = env + " '" + std::string(PARITY_CLI) + "' compare '" + dump() + "' '" + dump() + "' " + flags;
    const auto r = test::run_process({"/usr/bin/script", "-qec", cmd, "/dev/null"});
    EXPECT_EQ(r.exit_code, 0) << cmd << "\n" << r.out << r.err;
    return r.out.find("\033[") != std::string::npos;
  };
  EXPECT_TRUE(on_tty("NO_COLOR=", ""));  // the terminal is real: auto colours it
  EXPECT_FALSE(on_tty("NO_COLOR=1", ""));
  EXPECT_FALSE(on_tty("NO_COLOR=0", ""));  // any non-empty value, "0" included
  EXPECT_TRUE(on_tty("NO_COLOR=1", "--color always"));
}

}  // namespace
}  // namespace parity
