#include "support/test_support.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace parity::test {

namespace fs = std::filesystem;

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/parity-test-XXXXXX";
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed for " + tmpl);
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

RunResult run_process(const std::vector<std::string>& argv) {
  TempDir tmp;
  const std::string out_path = tmp.file("stdout"), err_path = tmp.file("stderr");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  RunResult r;
  if (rc != 0) {
    r.err = "posix_spawn failed for " + argv[0];
    return r;
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_text(out_path);
  r.err = read_text(err_path);
  return r;
}

RunResult run_parity(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {PARITY_CLI};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv);
}

std::string numpy_unavailable_reason() {
  static const std::string reason = [] {
    if (::access("/usr/bin/python3", X_OK) != 0) return std::string("/usr/bin/python3 not found");
    const RunResult r = run_process({"/usr/bin/python3", "-c", "import numpy"});
    if (r.exit_code != 0) return std::string("/usr/bin/python3 cannot import numpy (apt-get install python3-numpy)");
    return std::string();
  }();
  return reason;
}

RunResult run_numpy_script(const std::string& script, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/python3", std::string(PARITY_SOURCE_DIR) + "/tests/numpy/" + script};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace parity::test
