// parity replay: run case files (or one --case) on two backends and compare every output.
#include <algorithm>
#include <filesystem>
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/progress.h"
#include "compare/dump_reader.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/gpu.h"
#include "kernels/backend.h"
#include "runners/replay.h"

namespace parity::cli {

namespace {

// Whether a folder holds files named as a dump names them (<index>.<layer>.<role>.npy).
bool looks_like_a_dump(const std::string& dir) {
  static const std::regex dump_file(R"(^[0-9]{4,}\..+\.npy$)");
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (std::regex_match(e.path().filename().string(), dump_file)) return true;
  }
  return false;
}

struct Options {
  std::string cases_file, case_line, filter, shard, json, dump, inputs;
  bool force = false;
  HalfType dtype = HalfType::None;
  bool dtype_given = false;  // --dtype fp32 given: every case in float32, whatever precision= its line names
  ReplayOptions replay;
};

std::pair<int64_t, int64_t> parse_shard(const std::string& s) {
  const size_t slash = s.find('/');
  try {
    if (slash != std::string::npos) {
      const int64_t i = std::stoll(s.substr(0, slash)), n = std::stoll(s.substr(slash + 1));
      if (n > 0 && i >= 0 && i < n) return {i, n};
    }
  } catch (const std::exception&) {
  }
  throw Error("--shard " + s + ": expected i/n with 0 <= i < n");
}

std::string device_of(const std::string& backend_name) {
  if (runs_on_gpu(backend_name)) return gpu_status().available ? gpu_status().device : "none";
  return "cpu";
}

// The type the cases run in, as their lines say (--dtype, or precision= in a case file): one for
// all of them, or None when they differ (each row is judged at its own line's).
HalfType cases_type(const std::vector<Case>& cases) {
  if (cases.empty()) return HalfType::None;
  const HalfType first = Call(cases.front().line).half();
  for (const Case& c : cases) {
    if (Call(c.line).half() != first) return HalfType::None;
  }
  return first;
}

// The profile the cases are judged at: --precision, or their type's when that is coarser (the
// judge follows each line's precision=).
Precision judged_at(const Options& o, HalfType type) { return coarser(o.replay.precision, precision_of(type)); }

int run_replay(const Options& o) {
  if (o.cases_file.empty() == o.case_line.empty()) throw Error("give a case file or --case 'LINE' (one of them)");
  std::vector<Case> all;
  if (!o.case_line.empty()) {
    Case c = parse_case(o.case_line, "--case");
    if (c.name.empty()) c.name = "case";
    all.push_back(c);
  } else {
    all = read_case_file(o.cases_file);
  }
  if (o.dtype_given) {
    for (Case& c : all) c.line = with_half(c.line, o.dtype);  // the same cases in another type
  }
  const std::regex filter(o.filter.empty() ? ".*" : o.filter);
  const auto [shard_i, shard_n] = o.shard.empty() ? std::pair<int64_t, int64_t>{0, 1} : parse_shard(o.shard);
  std::vector<Case> cases;
  for (size_t i = 0; i < all.size(); ++i) {
    if (int64_t(i) % shard_n == shard_i && std::regex_search(all[i].name + " " + all[i].line, filter)) cases.push_back(all[i]);
  }
  if (cases.empty()) {
    fmt::print("NOTHING CHECKED: no case matches --filter '{}'{}\n", o.filter, o.shard.empty() ? "" : " in shard " + o.shard);
    return kNothingChecked;
  }
  backend(o.replay.backend_a), backend(o.replay.backend_b), backend(o.replay.judge);  // unknown names are usage errors
  // --inputs naming a dump: its manifest says which file holds each layer's inputs (read once,
  // here, so that a damaged dump is refused before any case runs).
  ReplayOptions ro = o.replay;
  if (std::error_code ec; !ro.inputs_dir.empty() && std::filesystem::exists(ro.inputs_dir + "/manifest.json", ec)) {
    ro.inputs_dump = std::make_shared<const Dump>(read_dump(ro.inputs_dir));
  } else if (!ro.inputs_dir.empty() && looks_like_a_dump(ro.inputs_dir)) {
    // A dump's files (0007.model.2.cv1.conv.out0.npy) without its manifest: a run that was killed.
    throw Error("no manifest.json: an incomplete dump (interrupted, or still being written); --inputs takes a complete dump, or a "
                "folder of <case name>.<input>.npy files")
        .file(ro.inputs_dir);
  }

  const HalfType type = cases_type(cases);
  std::unique_ptr<DumpWriter> dump_a, dump_b;
  if (!o.dump.empty()) {
    const std::string model = o.cases_file.empty() ? "--case" : o.cases_file;
    const auto info = [&](const std::string& backend_name) {
      DumpInfo i{model, backend_name, device_of(backend_name), o.replay.seed};
      if (type != HalfType::None) i.run.precision = half_name(type);
      return i;
    };
    dump_a = std::make_unique<DumpWriter>(o.dump + "/a", info(o.replay.backend_a), o.force);
    dump_b = std::make_unique<DumpWriter>(o.dump + "/b", info(o.replay.backend_b), o.force);
  }

  const std::string precision_flag =
      o.replay.precision == Precision::Fp32 ? "" : std::string(" --precision ") + precision_profile(o.replay.precision).name;
  Progress progress;
  int counts[kStateCount] = {};
  int structural = 0, explained = 0;
  std::string skipped_reason;
  nlohmann::json rows = nlohmann::json::array();
  std::vector<std::string> lines;
  for (const Case& c : cases) lines.push_back(c.line);
  for (const std::string& note : backend_notes({o.replay.backend_a, o.replay.backend_b, o.replay.judge}, lines)) fmt::print("{}\n", note);
  fmt::print("{:<11} {:>10} {:>10} {:>5} {:>9} {:>9}  {}\n", "state", "max abs", "max rel", "bits", o.replay.backend_a + " ms",
             o.replay.backend_b + " ms", "name  case");
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    progress.show(int64_t(i) + 1, int64_t(cases.size()), c.name);
    CaseResult r;
    try {
      r = replay_case(c, ro, dump_a.get(), dump_b.get());
    } catch (Error& e) {
      e.layer(c.name);
      throw;  // the progress line is erased as it goes out of scope
    }
    progress.clear();
    ++counts[int(r.state)];
    structural += r.structural && r.state == State::Failed;
    explained += r.explained;
    if (r.state == State::Skipped) skipped_reason = r.reason;
    fmt::print("{:<11} {:>10.3g} {:>10.3g} {:>5} {:>9.3f} {:>9.3f}  {}  {}\n", state_name(r.state), r.max_abs, r.max_rel, r.bits,
               r.ms_a, r.ms_b, c.name, c.line);
    if (!r.reason.empty()) fmt::print("            {}\n", r.reason);
    if (r.state == State::Failed || r.state == State::Unchecked) {
      // With --inputs the case's inputs come from there, so the REPRO line names it too.
      const std::string inputs_flag = ro.inputs_dir.empty() ? "" : " --inputs '" + ro.inputs_dir + "'";
      fmt::print("REPRO: parity replay --case '{}' --seed {} --backend {} --vs {}{}{}\n", c.str(), o.replay.seed,
                 o.replay.backend_a, o.replay.backend_b, precision_flag, inputs_flag);
    }
    rows.push_back({{"name", c.name}, {"case", c.str()}, {"state", state_name(r.state)}, {"explained", r.explained},
                    {"reason", r.reason}, {"effective_bits", r.bits},
                    {"max_abs", r.max_abs}, {"max_rel", r.max_rel}, {"ms_a", r.ms_a}, {"ms_b", r.ms_b}});
  }
  if (dump_a) dump_a->finish(), dump_b->finish();
  const std::string source = o.cases_file.empty() ? "--case" : o.cases_file;
  const int checked = counts[int(State::Passed)] + counts[int(State::Failed)] + counts[int(State::Mistrusted)] +
                      counts[int(State::Unchecked)];
  fmt::print("{}: {} cases: {} passed ({} explained by the judge), {} failed, {} mistrusted, {} unchecked, {} skipped, {} unsupported "
             "({} vs {}, judge {}, precision {}, dtype {}, seed {})\n",
             source, cases.size(), counts[int(State::Passed)], explained, counts[int(State::Failed)], counts[int(State::Mistrusted)],
             counts[int(State::Unchecked)], counts[int(State::Skipped)], counts[int(State::Unsupported)], o.replay.backend_a,
             o.replay.backend_b, o.replay.judge, precision_profile(judged_at(o, type)).name, half_name(type), o.replay.seed);
  if (checked == 0) {
    fmt::print("NOTHING CHECKED: every case was skipped or unsupported{}\n",
               counts[int(State::Skipped)] ? " (" + skipped_reason + ")" : std::string());
  }
  if (!o.json.empty()) {
    nlohmann::json j = {{"source", source}, {"backend_a", o.replay.backend_a}, {"backend_b", o.replay.backend_b},
                        {"judge", o.replay.judge}, {"precision", precision_profile(judged_at(o, type)).name}, {"dtype", half_name(type)}, {"seed", o.replay.seed}, {"rows", rows},
                        {"summary", {{"passed", counts[int(State::Passed)]}, {"explained", explained},
                                     {"failed", counts[int(State::Failed)]}, {"mistrusted", counts[int(State::Mistrusted)]},
                                     {"unchecked", counts[int(State::Unchecked)]}, {"skipped", counts[int(State::Skipped)]},
                                     {"unsupported", counts[int(State::Unsupported)]}}}};
    write_file_atomically(o.json, j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  }
  return verdict_exit_code(checked, counts[int(State::Failed)] + counts[int(State::Unchecked)], structural);
}

}  // namespace

Command add_replay_command(CLI::App& parent) {
  auto o = std::make_shared<Options>();
  CLI::App* app = parent.add_subcommand(
      "replay", "Run each case of a case file on two backends with the same seeded inputs and compare every output");
  app->add_option("cases", o->cases_file, "a case file (cases/yolov5s.cases)");
  app->add_option("--case", o->case_line, "one case line instead of a file");
  app->add_option("--backend", o->replay.backend_a, "backend A, the expected side")->capture_default_str();
  app->add_option("--vs", o->replay.backend_b, "backend B, the side under test")->capture_default_str();
  app->add_option("--judge", o->replay.judge, "the backend that re-runs a case whose outputs differ beyond tolerance")
      ->capture_default_str();
  const auto load_plugins = add_backend_plugin_flag(app);
  app->add_option_function<std::string>(
         "--precision", [o](const std::string& p) { o->replay.precision = parse_precision(p); },
         "judge float outputs against fp32 (default), tf32, fp16 or bf16 arithmetic (docs/DESIGN.md, \"Precision\")");
  add_dtype_flag(app, o->dtype)->each([o](const std::string&) { o->dtype_given = true; });
  app->add_option("--seed", o->replay.seed, "seed of the inputs")->capture_default_str();
  app->add_option("--filter", o->filter, "only cases whose 'name line' matches this regular expression");
  app->add_option("--shard", o->shard, "i/n: only cases whose index modulo n is i (0-based)");
  app->add_option("--json", o->json, "also write every row and the summary to this JSON file");
  app->add_option("--dump", o->dump, "write both sides as dumps: DIR/a and DIR/b (inputs and outputs, manifest.json)");
  app->add_flag("--force", o->force, "let --dump overwrite non-empty folders");
  app->add_option("--inputs", o->replay.inputs_dir, "read inputs instead of seeding them: from a dump (the layer of the case's name running its call; parity run --dump or "
                  "python/parity_torch), or from DIR/<name>.<input>.npy");
  app->footer(std::string(
      "Rows: state, max abs and max rel difference, effective mantissa bits of B against A, time on each backend, name and case. A FAILED row is\n"
      "followed by its reason and a REPRO line. Outputs beyond tolerance (compare/tolerance.h) are re-run on the\n"
      "judge: the side that does not match it is named; both matching is PASSED, explained (nms and argsort: any\n"
      "valid answer passes).\n") +
      kExitCodeFooter);
  return {app, [o, load_plugins] {
            load_plugins();
            return run_replay(*o);
          }};
}

}  // namespace parity::cli
