#pragma once
// A subcommand: its CLI11 parser and what runs when it was chosen. Each add_* function declares
// one subcommand's flags on `parent`; run() returns the exit code and may throw parity::Error.
#include <CLI/CLI.hpp>

#include <functional>
#include <vector>

namespace parity::cli {

struct Command {
  CLI::App* app;
  std::function<int()> run;
};

Command add_inspect_command(CLI::App& parent);
Command add_bench_command(CLI::App& parent);
Command add_cases_command(CLI::App& parent);
Command add_replay_command(CLI::App& parent);
Command add_run_command(CLI::App& parent);
Command add_compare_command(CLI::App& parent);
Command add_bisect_command(CLI::App& parent);
Command add_golden_command(CLI::App& parent);


}  // namespace parity::cli
