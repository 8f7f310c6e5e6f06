// parity bench: time op cases on two backends in one run and report totals and their ratio.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/progress.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/backend.h"
#include "runners/bench.h"

namespace parity::cli {

namespace {

struct Options {
  std::string model = "yolov5s";
  int64_t img = 640, batch = 1;
  std::string op, filter, json;
  BenchOptions bench;
};

int run_bench(const Options& o) {
  std::vector<Case> cases;
  const std::regex filter(o.filter.empty() ? ".*" : o.filter);
  for (const Case& c : yolov5_forward(yolov5_variant(o.model), o.img, o.batch)) {
    if ((o.op.empty() || op_name_of(c.line) == o.op) && std::regex_search(c.name, filter)) cases.push_back(c);
  }
  if (cases.empty()) throw Error("no case of " + o.model + " matches --op '" + o.op + "' and --filter '" + o.filter + "'");

  Progress progress;
  const auto rows = bench_cases(cases, o.bench, [&](size_t i, size_t n) {
    progress.show(int64_t(i) + 1, int64_t(n), cases[i % cases.size()].name);
  });
  progress.clear();

  fmt::print("{} {}x{} batch {}: {} cases, {} threads, median of {} runs after {} warm-up\n", o.model, o.img, o.img,
             o.batch, rows.size(), num_threads(), o.bench.repeat, o.bench.warmup);
  fmt::print("{:<24} {:>12} {:>12} {:>7}  {}\n", "name", o.bench.backend_a + " ms", o.bench.backend_b + " ms",
             "ratio", "case");
  double ta = 0, tb = 0;
  for (const BenchRow& r : rows) {
    ta += r.ms_a, tb += r.ms_b;
    fmt::print("{:<24} {:>12.3f} {:>12.3f} {:>7.2f}  {}\n", r.name, r.ms_a, r.ms_b, r.ms_a / r.ms_b, r.line);
  }
  fmt::print("{:<24} {:>12.1f} {:>12.1f} {:>7.2f}  ({} / {})\n", "total", ta, tb, ta / tb, o.bench.backend_a,
             o.bench.backend_b);
  if (!o.json.empty()) {
    nlohmann::json j = {{"model", o.model}, {"img", o.img}, {"batch", o.batch}, {"threads", num_threads()},
                        {"backend_a", o.bench.backend_a}, {"backend_b", o.bench.backend_b},
                        {"repeat", o.bench.repeat}, {"total_ms_a", ta}, {"total_ms_b", tb}, {"rows", nlohmann::json::array()}};
    for (const BenchRow& r : rows) j["rows"].push_back({{"name", r.name}, {"line", r.line}, {"ms_a", r.ms_a}, {"ms_b", r.ms_b}});
    write_file_atomically(o.json, j.dump(2) + "\n");
  }
  return kPassed;
}

}  // namespace

Command add_bench_command(CLI::App& parent) {
  auto o = std::make_shared<Options>();
  CLI::App* app = parent.add_subcommand(
      "bench", "Time each op of a YOLOv5 forward on two backends in the same run (default: every conv2d of "
               "yolov5s at 640x640, ref against aten)");
  app->add_option("--model", o->model, "yolov5n, yolov5s, yolov5m, yolov5l or yolov5x")->capture_default_str();
  app->add_option("--img", o->img, "image size, a multiple of 32")->capture_default_str();
  app->add_option("--batch", o->batch, "batch size")->capture_default_str();
  app->add_option("--op", o->op, "only this op (conv2d, silu, ...); default: every op");
  app->add_option("--filter", o->filter, "only layers whose name matches this regular expression");
  app->add_option("--backend", o->bench.backend_a, "first backend")->capture_default_str();
  app->add_option("--vs", o->bench.backend_b, "second backend")->capture_default_str();
  app->add_option("--repeat", o->bench.repeat, "timed runs per case (median reported)")->capture_default_str();
  app->add_option("--warmup", o->bench.warmup, "untimed runs per case first")->capture_default_str();
  app->add_option("--seed", o->bench.seed, "seed of the inputs")->capture_default_str();
  app->add_option("--json", o->json, "also write the rows and totals to this JSON file");
  app->footer("Threads: PARITY_NUM_THREADS (default all cores) for parity, OpenBLAS and LibTorch alike.");
  return {app, [o] { return run_bench(*o); }};
}

}  // namespace parity::cli
