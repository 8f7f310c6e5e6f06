#pragma once
// Helpers shared by the test binaries: scratch folders, running the `parity` binary and Python.
#include <cstdint>
#include <string>
#include <vector>

namespace parity::test {

// A fresh folder under $TMPDIR (or /tmp), removed with its content on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct RunResult {
  int exit_code = -1;  // -1 when killed by a signal
  std::string out, err;
};

struct ProcessOptions {
  int kill_after_ms = -1;         // SIGKILL the process this long after its start (if still running)
  int64_t file_size_limit = -1;   // RLIMIT_FSIZE in bytes for the process (ulimit -f): a full disk
  bool killed = false;            // out: the kill happened before the process ended
};

// Runs argv[0] with the given arguments (no shell), capturing stdout and stderr.
RunResult run_process(const std::vector<std::string>& argv);
RunResult run_process(const std::vector<std::string>& argv, ProcessOptions& options);

// Runs the built `parity` binary.
RunResult run_parity(const std::vector<std::string>& args);
RunResult run_parity(const std::vector<std::string>& args, ProcessOptions& options);

// Empty when /usr/bin/python3 can import numpy, else why it cannot (for GTEST_SKIP).
std::string numpy_unavailable_reason();

// /usr/bin/python3 running tests/numpy/<script> with arguments.
RunResult run_numpy_script(const std::string& script, const std::vector<std::string>& args);

std::string read_text(const std::string& path);
void write_bytes(const std::string& path, const std::string& bytes);

// Lines of `text` without the trailing newline of the last one.
std::vector<std::string> lines_of(const std::string& text);

}  // namespace parity::test
