// parity compare A B and parity bisect A B: two dumps, layer by layer.
#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <tuple>

#include "cli/command.h"
#include "cli/compare_npy.h"
#include "cli/exit_codes.h"
#include "compare/bisect.h"
#include "compare/dump_compare.h"
#include "compare/layer_alignment.h"
#include "compare/report.h"
#include "compare/judge.h"
#include "core/error.h"
#include "core/stopwatch.h"
#include "core/thread_pool.h"
#include "kernels/backend.h"

namespace parity::cli {

namespace {

struct Options {
  std::string a, b, json, csv, html, tol_file, layers, rerun, judge = "ref", precision = "auto", color = "auto";
  double atol = -1, rtol = -1;  // -1: not given (the flags refuse negative values)
  bool all = false, timing = false, failed = false;
  int top = 0;
  std::string op;                   // two .npy files: the call whose tolerance applies
  std::vector<std::string> inputs;  // two .npy files: that call's inputs
};

// --timing: where the time went, on stderr so that the report on stdout stays as it is.
void print_timing(const CompareResult& r, double read_s) {
  const CompareTiming& t = r.timing;
  fmt::print(stderr, "timing ({} threads):\n", num_threads());
  fmt::print(stderr, "  manifests and headers      {:8.3f} s\n", read_s);
  fmt::print(stderr, "  element-wise pass          {:8.3f} s wall, {} layers ({:.3f} s thread time, {:.3f} s of it conv2d's statistical test)\n",
             t.elementwise_s, t.judged, t.elementwise_thread_s + t.precision_thread_s, t.precision_thread_s);
  int64_t layers = 0;
  for (const auto& [op, c] : t.local_by_op) layers += c.layers;
  fmt::print(stderr, "  local checks               {:8.3f} s wall, {} layers\n", t.local_s, layers);
  size_t width = 24;  // the op column as wide as its longest name (torch.nn.functional.batch_norm)
  for (const auto& [op, c] : t.local_by_op) width = std::max(width, op.size());
  for (const auto& [op, c] : t.local_by_op) {
    fmt::print(stderr, "    {:<{}} {:8.3f} s thread time, {} layers\n", op, width, c.thread_s, c.layers);
  }
}

ReportHeader header_of(const Options& o, const Dump& a, const Dump& b, const std::string& precision) {
  // A hand-written manifest may leave these out (docs/MANIFEST.md).
  auto given = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  auto text = [&](const Dump& d) {
    return fmt::format("{} ({} on {}, {}, seed {})", d.dir, given(d.model), given(d.backend), given(d.device),
                       d.seed ? std::to_string(*d.seed) : std::string("not recorded"));
  };
  return {text(a), text(b), o.judge, precision};
}

// The precision a dump's run recorded (parity_torch writes run.precision from the model's dtypes,
// autocast and the TF32 switches); fp32 where it recorded none.
Precision recorded_precision(const Dump& d) {
  const auto it = d.run.find("precision");
  if (it == d.run.end()) return Precision::Fp32;
  try {
    return parse_precision(it->second);
  } catch (const Error&) {
    throw Error(d.dir + "/manifest.json: run \"precision\": '" + it->second + "' is none of fp32, tf32, fp16, bf16");
  }
}

// Whether a dump holds a float64 tensor (a float64 run written as it ran).
bool holds_float64(const Dump& d) {
  for (const DumpLayer& l : d.layers) {
    for (const std::vector<DumpTensorInfo>* list : {&l.inputs, &l.outputs}) {
      for (const DumpTensorInfo& t : *list) {
        if (t.dtype == "float64") return true;
      }
    }
  }
  return false;
}

// --precision auto (the default): the coarser of what the two runs recorded, so that a CPU run
// against a CUDA run with PyTorch's default TF32 convolutions, or against a half-precision run,
// is judged at the precision that run computed in. Returns the header's text for it.
std::string settle_precision(const Options& o, const Dump& a, const Dump& b, CompareOptions& co) {
  if (o.precision != "auto") return o.precision;
  const Precision pa = recorded_precision(a), pb = recorded_precision(b), p = coarser(pa, pb);
  co.judge.precision = p;
  // Each side's local check judges its own kernels at its own run's precision, where its dump
  // records one (a manifest without it, another tool's, is judged at the comparison's).
  for (const auto& [run, d, own] : {std::tuple{&co.judge.runs[0], &a, pa}, std::tuple{&co.judge.runs[1], &b, pb}}) {
    if (d->run.count("precision")) run->precision = own;
    run->cpu = d->device == "cpu";
    const auto autocast = d->run.find("autocast");
    run->autocast = autocast != d->run.end() && autocast->second.find("cpu:") != std::string::npos;
    // A float64 run written as float32: by its parameters, or, for a model without any (NeRF's
    // sampler), by what the dump narrowed. A float32 model's one float64 tensor (a numpy
    // constant) does not make the run one.
    const auto named = [&](const char* key) {
      const auto it = d->run.find(key);
      return it != d->run.end() && it->second.find("float64") != std::string::npos;
    };
    const auto params = d->run.find("param_dtypes");
    const bool no_params = params == d->run.end() || params->second == "none";
    run->wider = (named("param_dtypes") || (no_params && named("written_from"))) && !holds_float64(*d);
  }
  const std::string name = precision_profile(p).name;
  if (pa == Precision::Fp32 && pb == Precision::Fp32) return name;
  const std::string who = pa == pb ? "both runs" : pa == p ? "A's run" : "B's run";
  return name + " (auto: " + who + " recorded " + name + ")";
}

// The backend a flag names, refused with the flag's name when unknown or unusable here.
const Backend& flag_backend(const std::string& flag, const std::string& name) {
  const Backend* be = nullptr;
  try {
    be = &backend(name);
  } catch (const Error& e) {
    throw Error(flag + ": " + e.what());
  }
  if (const std::string why = be->unavailable_reason(); !why.empty()) throw Error(flag + " " + name + " cannot run here: " + why);
  return *be;
}

// A report file's place, checked before any dump is read: its folder exists and takes files,
// and the path is no folder itself. Otherwise the table would print and the verdict's exit code
// be lost to the write's error.
void check_output_path(const char* flag, const std::string& path) {
  if (path.empty()) return;
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p(path);
  const fs::path folder = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(folder, ec)) throw Error(std::string(flag) + " " + path + ": folder " + folder.string() + " does not exist");
  if (fs::is_directory(p, ec)) throw Error(std::string(flag) + " " + path + ": is a folder, not a file");
  if (::access(folder.c_str(), W_OK) != 0) throw Error(std::string(flag) + " " + path + ": folder " + folder.string() + " is not writable");
}

// Everything the flags decide, checked before any dump is read: a usage error comes first, not
// after minutes of reading a batch-32 dump.
CompareOptions compare_options(const Options& o) {
  check_output_path("--json", o.json), check_output_path("--csv", o.csv), check_output_path("--html", o.html);
  CompareOptions co;
  if ((o.atol >= 0) != (o.rtol >= 0)) throw Error("--atol and --rtol go together");
  if (o.atol >= 0 && !o.tol_file.empty()) throw Error("give --atol/--rtol or --tol-file, not both");
  if (o.atol >= 0) co.judge.tolerance = ToleranceOverride{o.atol, o.rtol};
  if (!o.tol_file.empty()) co.judge.per_layer = read_tolerance_file(o.tol_file);
  co.judge.judge = o.judge;
  if (o.precision != "auto") co.judge.precision = parse_precision(o.precision);  // auto: once the dumps are read
  flag_backend("--judge", o.judge);
  if (!o.layers.empty()) {
    try {
      co.layers = std::regex(o.layers);
    } catch (const std::regex_error& e) {
      throw Error("--layers: bad regular expression: " + std::string(e.what()));
    }
  }
  return co;
}

int exit_code(const CompareResult& r) {
  return verdict_exit_code(int(r.layers.size()), r.failed + r.propagated + r.unchecked, r.structural_origins);
}

// --color auto (the default) colours the table's states on a terminal unless NO_COLOR is set to
// anything non-empty (https://no-color.org); always and never are explicit and win over NO_COLOR.
bool use_colour(const std::string& mode) {
  if (mode != "auto") return mode == "always";
  const char* no_color = std::getenv("NO_COLOR");
  return ::isatty(1) && !(no_color && *no_color);
}

// Where long notes wrap: the terminal's width, or $COLUMNS when set; a pipe or a file keeps one
// line per row (for grep and awk) unless COLUMNS says otherwise.
int table_width() {
  if (const char* c = std::getenv("COLUMNS"); c && std::atoi(c) > 0) return std::atoi(c);
  winsize ws{};
  if (::isatty(1) && ::ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 0;
}

TableView table_view(const Options& o) {
  TableView v;
  v.colour = use_colour(o.color);
  v.all_tensors = o.all, v.failed_only = o.failed, v.top = o.top, v.width = table_width();
  return v;
}

// Both dumps read and compared as the flags say: what compare and bisect print from.
struct Compared {
  CompareOptions co;
  Dump a, b;
  std::string precision;  // the header's text for the settled --precision
  CompareResult r;
  std::string not_comparable;  // why the two dumps cannot be compared at all, or ""
};

Compared read_and_compare(const Options& o) {
  Compared c;
  c.co = compare_options(o);  // every flag first, before any dump is read
  const Stopwatch reading;
  c.a = read_dump(o.a), c.b = read_dump(o.b);
  const double read_s = reading.seconds();
  c.precision = settle_precision(o, c.a, c.b, c.co);
  c.r = compare_dumps(c.a, c.b, c.co);
  if (o.timing) print_timing(c.r, read_s);
  c.not_comparable = not_comparable(c.a, c.b);
  return c;
}

// Why no layer was judged: the filter left none, or neither dump holds one.
std::string nothing_checked(const Options& o) {
  return o.layers.empty() ? "nothing checked: neither dump holds a layer" : "nothing checked: --layers '" + o.layers + "' matches no layer";
}

int compare(const Options& o) {
  if (are_npy_files(o.a, o.b)) {
    if (!o.tol_file.empty() || !o.layers.empty() || !o.csv.empty() || !o.html.empty() || o.all || o.failed || o.top > 0) {
      throw Error("two .npy files take --atol/--rtol, --op, --inputs, --precision and --json; the other flags are for dumps");
    }
    return compare_npy_files({o.a, o.b, o.atol, o.rtol, o.op, o.inputs, o.precision == "auto" ? "fp32" : o.precision, o.json});
  }
  if (!o.op.empty() || !o.inputs.empty()) throw Error("--op and --inputs are for two .npy files, not dumps");
  const Compared c = read_and_compare(o);
  const CompareResult& r = c.r;
  const ReportHeader h = header_of(o, c.a, c.b, c.precision);
  if (!c.not_comparable.empty()) {
    fmt::print(stderr, "parity compare: {}\n", c.not_comparable);
    if (!o.json.empty()) write_json(o.json, r, h);
    if (!o.csv.empty()) write_csv(o.csv, r);
    if (!o.html.empty()) write_html(o.html, r, h);
    return kStructuralMismatch;
  }
  write_table(std::cout, r, h, table_view(o));
  if (r.layers.empty()) fmt::print("{}\n", nothing_checked(o));
  if (!o.json.empty()) write_json(o.json, r, h);
  if (!o.csv.empty()) write_csv(o.csv, r);
  if (!o.html.empty()) write_html(o.html, r, h);
  return exit_code(r);
}

int bisect(const Options& o) {
  // An unknown --rerun backend, or one that cannot run here, is a usage error before any dump
  // is read, divergence or not (rerun() itself runs only after the whole bisect).
  if (!o.rerun.empty()) flag_backend("--rerun", o.rerun);
  const Compared c = read_and_compare(o);
  const CompareResult& r = c.r;
  const CompareOptions& co = c.co;
  const Dump &a = c.a, &b = c.b;
  const std::string& precision = c.precision;
  if (!c.not_comparable.empty()) {
    fmt::print(stderr, "parity bisect: {}\n", c.not_comparable);
    return kStructuralMismatch;
  }
  if (co.judge.precision != Precision::Fp32 && o.precision == "auto") fmt::print("precision {}\n", precision);
  // --failed or --top: the rows they pick (with the header) before the origin; else no table.
  if (o.failed || o.top > 0) {
    write_table(std::cout, r, header_of(o, a, b, precision), table_view(o));
  } else {
    for (const std::string& p : r.provenance) fmt::print("provenance differs: {}\n", p);
    for (const std::string& e : r.expected) fmt::print("expected: {}\n", e);
  }
  const int code = exit_code(r);
  const Bisection found = bisection_of(r);
  if (!found.origin) {
    if (code == kNothingChecked) {
      fmt::print("{}\n", nothing_checked(o));
    } else if (code != kPassed && found.first_unexplained) {
      const LayerReport& l = *found.first_unexplained;
      fmt::print("no confident origin: first unexplained difference at {} (layer {}, {}): {}: {}\n", l.name, l.index, l.op,
                 l.verdict_word(), l.note());
    } else if (code == kPassed) {
      fmt::print("no divergence: {}\n", summary_line(r));
    }
  } else {
    const LayerReport& origin = *found.origin;
    fmt::print("origin: {} (layer {}, {})\n  defective: {}\n  {}\n  call: {}\n", origin.name, origin.index, origin.op,
               defective_text(origin), origin.reason, origin.line);
    if (!found.propagated.empty()) {
      fmt::print("propagated: {} later layers differ as far as their inputs do, {} .. {}\n", found.propagated.size(),
                 found.propagated.front(), found.propagated.back());
    }
    for (const LayerReport* l : found.other_origins) {
      fmt::print("also an origin: {} (layer {}, defective: {}): {}\n", l->name, l->index,
                 l->defective == Sides::None ? "the data" : sides_name(l->defective), l->reason);
    }
    if (!o.rerun.empty()) {
      for (const std::string& line : rerun_origin(backend(o.rerun), o.judge, co.judge, a, b, origin)) fmt::print("{}\n", line);
    }
  }
  fmt::print("{}\n", summary_line(r));
  if (!o.json.empty()) write_json(o.json, r, header_of(o, a, b, precision));
  if (!o.html.empty()) write_html(o.html, r, header_of(o, a, b, precision));
  return code;
}

// `npy`: compare also takes two .npy files; bisect takes dumps only.
void common_flags(CLI::App* app, Options& o, bool npy) {
  const std::string what = npy ? " (a folder holding manifest.json, or an .npy file)" : " (a folder holding manifest.json)";
  app->add_option("dump_a", o.a, "dump A" + what + ", the expected side")->required();
  app->add_option("dump_b", o.b, "dump B" + what + ", the side under test")->required();
  app->add_option("--atol", o.atol, "absolute tolerance for float outputs (with --rtol)")->check(at_least(0));
  app->add_option("--rtol", o.rtol, "relative tolerance for float outputs (with --atol)")->check(at_least(0));
  app->add_option("--tol-file", o.tol_file, "JSON {\"<layer or op regex>\": {\"atol\": X, \"rtol\": Y}}");
  app->add_option("--json", o.json, "write the full report as JSON");
  app->add_option("--html", o.html, "write one self-contained page: the table and a per-layer error plot");
  app->add_option("--layers", o.layers, "only report layers whose name matches this regular expression (all are judged)");
  app->add_option("--judge", o.judge, "the backend that runs each differing layer on each side's own inputs")->capture_default_str();
  app->add_option("--precision", o.precision,
                  "judge float outputs against fp32, tf32, fp16 or bf16 arithmetic; auto: the coarser of what the two runs "
                  "recorded (parity_torch records the model's dtypes, autocast and TF32), fp32 where none; float16 outputs, and "
                  "outputs a run held in float16 or bfloat16 before writing them wider (cast_from), are judged at that "
                  "precision at least")
      ->capture_default_str();
  app->add_flag("--timing", o.timing, "print on stderr where the time went: the element-wise pass and the local checks, by op");
  app->add_flag("--failed", o.failed, "table rows only for layers that did not pass (the summary still counts every layer)");
  app->add_option("--top", o.top, "table rows only for the K layers with the largest error/tolerance, largest first, with that figure")
      ->check(at_least(1))
      ->type_name("K");
  app->add_option("--color", o.color, "colour the table's states: auto (on a terminal, unless NO_COLOR is set), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
}

}  // namespace

Command add_compare_command(CLI::App& parent) {
  auto o = std::make_shared<Options>();
  CLI::App* app = parent.add_subcommand(
      "compare", "Compare two dumps layer by layer: structure first, then values under the tolerance policy; or two .npy tensors");
  common_flags(app, *o, true);
  const auto load_plugins = add_backend_plugin_flag(app);
  app->add_option("--csv", o->csv, "write one row per output tensor as CSV");
  app->add_flag("--all", o->all, "also one row per output of multi-output layers");
  app->add_option("--op", o->op, "two .npy files: the call that produced them, as a case line ('silu x=1x64x80x80'); its tolerance applies")
      ->type_name("CALL");
  app->add_option("--inputs", o->inputs, "two .npy files: the call's input files in its order (conv2d's bound needs them)")
      ->type_name("NPY...");
  app->footer(std::string(
      "Rows: state (* marks an origin), max abs, mean abs, max rel, cosine, max ULP, bits, % out of tolerance, worst\n"
      "element (index, both values in the note), layer, note. Tolerances: float32 atol 1e-5 rtol 1.3e-6\n"
      "(torch.testing's), float64 1e-7/1e-7, float16 1e-5/1e-3; conv2d adds (K + 2) * 2^-24 * sum|x*w| per element;\n"
      "integers exact; --atol/--rtol and --tol-file replace them, conv2d's bound included. conv2d also gets a\n"
      "statistical test on sampled elements against the rounding of the --precision profile (fp32 default, tf32,\n"
      "fp16, bf16); the bits column is the effective mantissa precision of the error (conv2d: each side's own).\n"
      "An output beyond tolerance is re-run by the judge on each side's own inputs: a side that\n"
      "does not match it is defective there (an origin); both matching means the difference is explained by the\n"
      "inputs (PASSED, explained; or PROPAGATED when an origin lies upstream). nms and argsort pass any valid answer\n"
      "(score ties, IoUs within 1e-5 of the threshold). Every tensor's hash is computed from its bytes.\n") +
      kExitCodeFooter);
  return {app, [o, load_plugins] {
            load_plugins();
            return compare(*o);
          }};
}

Command add_bisect_command(CLI::App& parent) {
  auto o = std::make_shared<Options>();
  CLI::App* app = parent.add_subcommand(
      "bisect", "Name the first layer where two dumps part ways: the first layer whose output, on either side, is not what "
                "the judge computes from that side's own inputs; later failures are propagated from it");
  common_flags(app, *o, false);
  const auto load_plugins = add_backend_plugin_flag(app);
  app->add_option("--rerun", o->rerun, "run the origin layer again on this backend with each side's inputs and judge it");
  app->footer(kExitCodeFooter);
  return {app, [o, load_plugins] {
            load_plugins();
            return bisect(*o);
          }};
}

}  // namespace parity::cli
