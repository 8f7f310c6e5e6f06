#pragma once
// A subcommand: its CLI11 parser and what runs when it was chosen. Each add_* function declares
// one subcommand's flags on `parent`; run() returns the exit code and may throw parity::Error.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/backend.h"

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
Command add_diff_report_command(CLI::App& parent);
Command add_golden_command(CLI::App& parent);

// The backend names a --backend flag takes, for its help: "ref, aten, ... or faulty:<defect>[:<n>]"
// (those registered when the help is built: a --backend-plugin's come on top).
inline std::string backend_choices() {
  const std::vector<std::string> names = backend_names();
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) s += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return s;
}

// What the backends say about how they run the ops of `lines` (Backend::note; the aten backends:
// which nms, torchvision's own or the composed fallback, and why), each note once, in order.
inline std::vector<std::string> backend_notes(const std::vector<std::string>& backends, const std::vector<std::string>& lines) {
  std::vector<std::string> ops, notes;
  for (const std::string& line : lines) {
    if (std::string op = op_name_of(line); std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
  }
  for (const std::string& b : backends) {
    for (const std::string& op : ops) {
      const std::string note = backend(b).note(op);
      if (!note.empty() && std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(note);
    }
  }
  return notes;
}

// --dtype fp32|fp16|bf16: the precision every float32 case or layer runs in (kernels/call.h,
// `precision=`), for the commands that run ops.
inline CLI::Option* add_dtype_flag(CLI::App* app, HalfType& dtype) {
  return app->add_option_function<std::string>(
      "--dtype", [&dtype](const std::string& d) { dtype = half_from_name(d); },
      "fp32 (default), fp16 or bf16: run every float32 op in that type (inputs and weights rounded to it, each backend's own half "
      "kernels, outputs in it; the lines say precision=, the judge follows). Values travel as float32 holding the type's values");
}

// --backend-plugin FILE, repeatable, for every command that takes a backend by name: a shared
// library that registers more backends (kernels/backend.h, "Plugins"). Returns what the command
// calls first when it runs, before any backend is looked up: it loads each file in order, and a
// bad one is a parity::Error naming it (exit 3).
inline std::function<void()> add_backend_plugin_flag(CLI::App* app) {
  auto files = std::make_shared<std::vector<std::string>>();
  app->add_option("--backend-plugin", *files,
                  "load a shared library that registers more backends (docs/EXTENDING.md, \"Backend plugins\"); repeatable")
      ->type_name("FILE")
      ->allow_extra_args(false);  // one file per flag: a positional after it stays positional
  return [files] {
    for (const std::string& f : *files) load_backend_plugin(f);
  };
}

// A numeric flag's lower bound as one plain line ("must be >= 0, not -1"): CLI11's own
// NonNegativeNumber/PositiveNumber print the type's whole range, a 300-digit bound for double.
// A value that is not a number passes here and CLI11's conversion refuses it.
inline CLI::Validator at_least(double min) {
  return CLI::Validator(
      [min](std::string& s) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(s, v) || v >= min) return "";
        return "must be >= " + CLI::detail::to_string(min) + ", not " + s;  // NaN lands here too
      },
      ">= " + CLI::detail::to_string(min));
}

}  // namespace parity::cli
