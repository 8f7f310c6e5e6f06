// parity compare A B and parity bisect A B: two dumps, layer by layer.
#include <fmt/format.h>
#include <unistd.h>

#include <iostream>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "compare/dump_compare.h"
#include "compare/report.h"
#include "compare/tolerance.h"
#include "core/error.h"
#include "kernels/backend.h"

namespace parity::cli {

namespace {

struct Options {
  std::string a, b, json, csv, html, tol_file, layers, rerun;
  double atol = -1, rtol = -1;
  bool all = false;
};

ReportHeader header_of(const Dump& a, const Dump& b) {
  auto text = [](const Dump& d) { return fmt::format("{} ({} on {}, {}, seed {})", d.dir, d.model, d.backend, d.device, d.seed); };
  return {text(a), text(b)};
}

CompareResult run_compare(const Options& o, const Dump& a, const Dump& b) {
  CompareOptions co;
  if ((o.atol >= 0) != (o.rtol >= 0)) throw Error("--atol and --rtol go together");
  if (o.atol >= 0 && !o.tol_file.empty()) throw Error("give --atol/--rtol or --tol-file, not both");
  if (o.atol >= 0) co.tolerance = ToleranceOverride{o.atol, o.rtol};
  if (!o.tol_file.empty()) co.per_layer = read_tolerance_file(o.tol_file);
  if (!o.layers.empty()) {
    try {
      co.layers = std::regex(o.layers);
    } catch (const std::regex_error& e) {
      throw Error("--layers: bad regular expression: " + std::string(e.what()));
    }
  }
  return compare_dumps(a, b, co);
}

// A structural difference downstream of a numeric origin (a different count of candidates)
// is part of that divergence: exit 2 is for structure that differs on its own.
int exit_code(const CompareResult& r) {
  if (r.structural_origins) return kStructuralMismatch;
  return r.failed ? kNumericMismatch : kPassed;
}

int compare(const Options& o) {
  const Dump a = read_dump(o.a), b = read_dump(o.b);
  const CompareResult r = run_compare(o, a, b);
  const ReportHeader h = header_of(a, b);
  write_table(std::cout, r, h, ::isatty(1), o.all);
  if (!o.json.empty()) write_json(o.json, r, h);
  if (!o.csv.empty()) write_csv(o.csv, r);
  if (!o.html.empty()) write_html(o.html, r, h);
  return exit_code(r);
}

// Runs the origin layer again on `backend_name` with A's inputs and compares with A's output.
void rerun(const Dump& a, const std::string& layer, const std::string& backend_name) {
  const DumpLayer* l = nullptr;
  for (const DumpLayer& x : a.layers) l = x.name == layer ? &x : l;
  if (!l) return;
  std::vector<Tensor> in;
  for (const DumpTensorInfo& t : l->inputs) in.push_back(a.load(t));
  const std::vector<Tensor> out = backend(backend_name).run(l->params, in);
  for (size_t k = 0; k < out.size() && k < l->outputs.size(); ++k) {
    const Tensor expected = a.load(l->outputs[k]);
    const TensorDiff d = compare_tensors(expected, out[k], tolerance_for(l->params, k, expected.dtype(), in));
    fmt::print("rerun of {} on {} with A's inputs, {}: {}  max abs {:.3g}, {} of {} out of tolerance{}\n", layer, backend_name,
               l->outputs[k].role, state_name(d.state), d.max_abs, d.bad, d.count,
               d.state == State::Failed ? " - the kernel itself is wrong on these inputs" : " - this backend reproduces A here");
  }
}

int bisect(const Options& o) {
  if (!o.rerun.empty()) backend(o.rerun);  // an unknown name is a usage error, divergence or not
  const Dump a = read_dump(o.a), b = read_dump(o.b);
  const CompareResult r = run_compare(o, a, b);
  if (r.origin < 0) {
    if (r.failed) {
      fmt::print("no origin: {} layers fail, none with inputs that agree (structural differences: {})\n", r.failed, r.structural);
      return kNumericMismatch;
    }
    fmt::print("no divergence: {}\n", summary_line(r));
    return kPassed;
  }
  const LayerReport& origin = r.layers[size_t(r.origin)];
  fmt::print("origin: {} (layer {}, {})\n  state: {}{}\n  {}\n  call: {}\n", origin.name, origin.index, origin.op,
             state_name(origin.state), origin.explained ? " (differences explained)" : "", origin.reason, origin.params);
  std::vector<std::string> propagated;
  for (const LayerReport& l : r.layers) {
    if (!l.propagated_from.empty()) propagated.push_back(l.name);
  }
  if (!propagated.empty()) {
    fmt::print("propagated: {} later layers diverge with differing inputs, {} .. {}\n", propagated.size(), propagated.front(),
               propagated.back());
  }
  for (int64_t i : r.other_origins) {
    const LayerReport& l = r.layers[size_t(i)];
    fmt::print("also diverges with agreeing inputs: {} ({}): {}\n", l.name, state_name(l.state), l.reason);
  }
  if (!o.rerun.empty()) rerun(a, origin.name, o.rerun);
  if (!o.json.empty()) write_json(o.json, r, header_of(a, b));
  return kNumericMismatch;
}

void common_flags(CLI::App* app, Options& o) {
  app->add_option("dump_a", o.a, "dump A, the expected side")->required();
  app->add_option("dump_b", o.b, "dump B, the side under test")->required();
  app->add_option("--atol", o.atol, "absolute tolerance for float outputs (with --rtol)");
  app->add_option("--rtol", o.rtol, "relative tolerance for float outputs (with --atol)");
  app->add_option("--tol-file", o.tol_file, "JSON {\"<layer or op regex>\": {\"atol\": X, \"rtol\": Y}}");
  app->add_option("--json", o.json, "write the full report as JSON");
}

}  // namespace

Command add_compare_command(CLI::App& parent) {
  auto o = std::make_shared<Options>();
  CLI::App* app = parent.add_subcommand("compare", "Compare two dumps layer by layer: structure first, then values under the tolerance policy");
  common_flags(app, *o);
  app->add_option("--csv", o->csv, "write one row per output tensor as CSV");
  app->add_option("--html", o->html, "write one self-contained page: the table and a per-layer error plot");
  app->add_option("--layers", o->layers, "only show layers whose name matches this regular expression");
  app->add_flag("--all", o->all, "also one row per output of multi-output layers");
  app->footer(
      "Rows: state (* marks the origin of a divergence), max abs, mean abs, max rel, cosine, max ULP, % out of\n"
      "tolerance, worst element (flat index), layer. Tolerances: float32 atol 1e-5 rtol 1.3e-6 (torch.testing's),\n"
      "float64 1e-7/1e-7, float16 1e-5/1e-3; conv2d adds (K + 2) * 2^-24 * sum|x*w| per element; integers exact;\n"
      "NMS keep lists classify differences (score ties, IoU within 1e-5 of the threshold) and fail on unexplained ones.\n"
      "Exit codes: 0 passed, 1 numeric mismatch, 2 structural mismatch, 3 usage or I/O error (incomplete dump).");
  return {app, [o] { return compare(*o); }};
}

Command add_bisect_command(CLI::App& parent) {
  auto o = std::make_shared<Options>();
  CLI::App* app = parent.add_subcommand(
      "bisect", "Name the first layer where two dumps part ways: its inputs agree and its outputs do not; later failures are "
                "propagated");
  common_flags(app, *o);
  app->add_option("--rerun", o->rerun, "run the origin layer again on this backend with A's inputs and report its local error");
  app->footer("Exit codes: 0 nothing diverges, 1 a divergence, 3 usage or I/O error.");
  return {app, [o] { return bisect(*o); }};
}

}  // namespace parity::cli
