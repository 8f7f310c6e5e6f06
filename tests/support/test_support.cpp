#include "support/test_support.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

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
  ProcessOptions none;
  return run_process(argv, none);
}

// fork + exec rather than posix_spawn: the child may need a resource limit set before exec.
RunResult run_process(const std::vector<std::string>& argv, ProcessOptions& options) {
  TempDir tmp;
  const std::string out_path = tmp.file("stdout"), err_path = tmp.file("stderr");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  RunResult r;
  const int out_fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int err_fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const pid_t pid = (out_fd >= 0 && err_fd >= 0) ? ::fork() : -1;
  if (pid == 0) {  // the child: only async-signal-safe calls until exec
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    if (options.file_size_limit >= 0) {
      const rlimit lim{rlim_t(options.file_size_limit), rlim_t(options.file_size_limit)};
      ::setrlimit(RLIMIT_FSIZE, &lim);
    }
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  if (out_fd >= 0) ::close(out_fd);
  if (err_fd >= 0) ::close(err_fd);
  if (pid < 0) {
    r.err = "cannot start " + argv[0];
    return r;
  }
  int status = 0;
  options.killed = false;
  if (options.kill_after_ms >= 0) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(options.kill_after_ms);
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() >= deadline) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        options.killed = WIFSIGNALED(status);
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  } else {
    ::waitpid(pid, &status, 0);
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_text(out_path);
  r.err = read_text(err_path);
  return r;
}

RunResult run_parity(const std::vector<std::string>& args) {
  ProcessOptions none;
  return run_parity(args, none);
}

RunResult run_parity(const std::vector<std::string>& args, ProcessOptions& options) {
  std::vector<std::string> argv = {PARITY_CLI};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, options);
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
