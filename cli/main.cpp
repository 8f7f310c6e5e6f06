// parity: checks that an operator's CUDA kernel computes what its CPU reference computes.
// main() only parses the command line, runs the chosen subcommand and maps failures to exit codes.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "core/error.h"
#include "core/gpu.h"
#include "core/mapped_file.h"
#include "core/thread_pool.h"
#include "core/version.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace {

std::string version_text() {
  const parity::GpuStatus& gpu = parity::gpu_status();
  return std::string("parity ") + PARITY_VERSION + " (" + PARITY_BUILD_TYPE + ", " + PARITY_CXX_COMPILER +
         ")\nCUDA backend: " + PARITY_CUDA_INFO +
         "\nGPU: " + (gpu.available ? gpu.device : gpu.reason) +
         "\nthreads: " + std::to_string(parity::num_threads());
}

// Edits (insertions, deletions, substitutions) between two words.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// " (did you mean --top?)" for the first `--word` on the command line that `command` does not
// know and that is within two edits of one of its options; "" when there is none.
std::string closest_option_hint(const CLI::App& command, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string word = argv[i];
    if (word.rfind("--", 0) != 0 || word.size() < 3) continue;
    word = word.substr(2, word.find('=') == std::string::npos ? std::string::npos : word.find('=') - 2);
    if (command.get_option_no_throw("--" + word) != nullptr) continue;
    std::string best;
    size_t best_distance = 3;
    for (const CLI::Option* o : command.get_options()) {
      for (const std::string& name : o->get_lnames()) {
        const size_t d = edit_distance(word, name);
        if (d < best_distance) best_distance = d, best = name;
      }
    }
    if (!best.empty()) return " (did you mean --" + best + "?)";
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace parity::cli;
  // Past a file-size limit (ulimit -f), write() then fails with EFBIG, which the writers report
  // as an I/O error naming the file, instead of the process dying from SIGXFSZ.
  std::signal(SIGXFSZ, SIG_IGN);
  // Dump files are read through mappings: one truncated underneath is an I/O error (exit 3) in
  // one line, not a crash.
  parity::exit_on_truncated_mapping(3);
#ifdef __GLIBC__
  // Compare and run allocate and free tensors of megabytes one after another. By default glibc
  // gives each such block back to the kernel when it is freed and takes fresh, zeroed pages for the
  // next one: a fifth of a ConvNeXt bf16 compare's time went to those page faults. Freed memory is
  // kept for reuse instead (blocks up to glibc's largest threshold, 32 MiB).
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
  CLI::App app(
      "parity: checks that a CUDA kernel computes what its CPU reference computes, on the tensor\n"
      "shapes a real model (YOLOv5) uses, and finds the first layer where two devices part ways.",
      "parity");
  app.require_subcommand(1);
  app.set_version_flag("--version", [] { return version_text(); }, "Show version, build and GPU status");
  app.footer(std::string(kExitCodeFooter) + "\nRun 'parity <command> --help' for a command's options.");

  std::vector<Command> commands;
  commands.push_back(add_cases_command(app));
  commands.push_back(add_replay_command(app));
  commands.push_back(add_run_command(app));
  commands.push_back(add_compare_command(app));
  commands.push_back(add_bisect_command(app));
  commands.push_back(add_diff_report_command(app));
  commands.push_back(add_golden_command(app));
  commands.push_back(add_inspect_command(app));
  commands.push_back(add_bench_command(app));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // Point at the help of the (sub)command the error is about: CLI11 records the subcommands
    // it entered before failing, so `parity compare` alone names "parity compare --help".
    std::string name = "parity";
    const CLI::App* at = &app;
    while (!at->get_subcommands().empty()) {
      at = at->get_subcommands().front();
      name += " " + at->get_name();
    }
    std::cerr << name << ": " << e.what() << closest_option_hint(*at, argc, argv) << " (see " << name << " --help)\n";
    return kUsageOrIoError;
  }

  for (const Command& c : commands) {
    if (!c.app->parsed()) continue;
    parity::exit_on_truncated_mapping(3, "parity " + c.app->get_name() + ": ");  // its messages' own prefix
    try {
      return c.run();
    } catch (const parity::Error& e) {
      std::cerr << "parity " << c.app->get_name() << ": " << e.what() << "\n";
    } catch (const std::filesystem::filesystem_error& e) {
      std::cerr << "parity " << c.app->get_name() << ": " << e.what() << "\n";
    } catch (const std::bad_alloc&) {
      std::cerr << "parity " << c.app->get_name() << ": out of memory\n";
    } catch (const std::exception& e) {
      std::cerr << "parity " << c.app->get_name() << ": internal error: " << e.what() << "\n";
    }
    return kUsageOrIoError;
  }
  return kUsageOrIoError;  // unreachable: require_subcommand(1) guarantees a parsed command
}
