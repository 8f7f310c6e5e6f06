#pragma once
// Helpers shared by the test binaries: scratch folders, running the `parity` binary and Python.
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

// Runs argv[0] with the given arguments (no shell), capturing stdout and stderr.
RunResult run_process(const std::vector<std::string>& argv);

// Runs the built `parity` binary.
RunResult run_parity(const std::vector<std::string>& args);

// Empty when /usr/bin/python3 can import numpy, else why it cannot (for GTEST_SKIP).
std::string numpy_unavailable_reason();

// /usr/bin/python3 running tests/numpy/<script> with arguments.
RunResult run_numpy_script(const std::string& script, const std::vector<std::string>& args);

std::string read_text(const std::string& path);
void write_bytes(const std::string& path, const std::string& bytes);

// Lines of `text` without the trailing newline of the last one.
std::vector<std::string> lines_of(const std::string& text);

}  // namespace parity::test
