// parity bench: time op cases on two backends in one run and report totals and their ratio.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/progress.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "cases/case_file.h"
#include "kernels/backend.h"
#include "runners/bench.h"

namespace parity::cli {

namespace {

struct Options {
  std::string model = "yolov5s";
  int64_t img = 640, batch = 1;
  std::string op, filter, json, cases_file;
  BenchOptions bench;
};

int run_bench(const Options& o) {
  std::vector<Case> cases;
  const std::regex filter(o.filter.empty() ? ".*" : o.filter);
  const std::vector<Case> all = o.cases_file.empty() ? yolov5_forward(yolov5_variant(o.model), o.img, o.batch) : read_case_file(o.cases_file);
  for (const Case& c : all) {
    if ((o.op.empty() || op_name_of(c.line) == o.op) && std::regex_search(c.name, filter)) cases.push_back(c);
  }
  if (cases.empty()) throw Error("no case of " + o.model + " matches --op '" + o.op + "' and --filter '" + o.filter + "'");

  Progress progress;
  const auto rows = bench_cases(cases, o.bench, [&](size_t i, size_t n) {
    progress.show(int64_t(i) + 1, int64_t(n), cases[i % cases.size()].name);
  });
  progress.clear();

  const std::string what = o.cases_file.empty() ? fmt::format("{} {}x{} batch {}", o.model, o.img, o.img, o.batch) : o.cases_file;
  fmt::print("{}: {} cases, {} threads, median of {} runs after {} warm-up\n", what, rows.size(), num_threads(), o.bench.repeat,
             o.bench.warmup);
  // GPU backends also get their device time (kernels without transfers) and the rate it gives:
  // TFLOP/s for conv2d, GB/s (bytes read and written once) for the rest.
  const bool dev_a = std::any_of(rows.begin(), rows.end(), [](const BenchRow& r) { return !std::isnan(r.device_ms_a); });
  const bool dev_b = std::any_of(rows.begin(), rows.end(), [](const BenchRow& r) { return !std::isnan(r.device_ms_b); });
  auto rate = [](const BenchRow& r, double ms) {
    if (std::isnan(ms) || ms <= 0) return std::string("-");
    return r.flops > 0 ? fmt::format("{:.1f} TF/s", r.flops / ms * 1e-9) : fmt::format("{:.0f} GB/s", r.bytes / ms * 1e-6);
  };
  const std::string a = o.bench.backend_a, b = o.bench.backend_b;
  size_t w = 24;
  for (const BenchRow& r : rows) w = std::max(w, r.name.size());
  fmt::print("{:<{}} {:>12} {:>12} {:>7}", "name", w, a + " ms", b + " ms", "ratio");
  if (dev_a || dev_b) fmt::print(" {:>14} {:>14} {:>7} {:>12} {:>12}", a + " dev ms", b + " dev ms", "ratio", a + " rate", b + " rate");
  fmt::print("  case\n");
  double ta = 0, tb = 0, da = 0, db = 0;
  for (const BenchRow& r : rows) {
    ta += r.ms_a, tb += r.ms_b;
    fmt::print("{:<{}} {:>12.3f} {:>12.3f} {:>7.2f}", r.name, w, r.ms_a, r.ms_b, r.ms_a / r.ms_b);
    if (dev_a || dev_b) {
      const double xa = dev_a ? r.device_ms_a : r.ms_a, xb = dev_b ? r.device_ms_b : r.ms_b;
      da += xa, db += xb;
      fmt::print(" {:>14.4f} {:>14.4f} {:>7.2f} {:>12} {:>12}", xa, xb, xa / xb, rate(r, xa), rate(r, xb));
    }
    fmt::print("  {}\n", r.line);
  }
  fmt::print("{:<{}} {:>12.1f} {:>12.1f} {:>7.2f}", "total", w, ta, tb, ta / tb);
  if (dev_a || dev_b) fmt::print(" {:>14.3f} {:>14.3f} {:>7.2f}", da, db, da / db);
  fmt::print("  ({} / {}{})\n", a, b, dev_a || dev_b ? "; dev: device time without transfers, wall time for CPU backends" : "");
  if (!o.json.empty()) {
    nlohmann::json j = {{"model", o.model}, {"img", o.img}, {"batch", o.batch}, {"threads", num_threads()},
                        {"backend_a", o.bench.backend_a}, {"backend_b", o.bench.backend_b},
                        {"repeat", o.bench.repeat}, {"total_ms_a", ta}, {"total_ms_b", tb}, {"rows", nlohmann::json::array()}};
    for (const BenchRow& r : rows) {
      nlohmann::json row = {{"name", r.name}, {"line", r.line}, {"ms_a", r.ms_a}, {"ms_b", r.ms_b}, {"bytes", r.bytes}, {"flops", r.flops}};
      if (!std::isnan(r.device_ms_a)) row["device_ms_a"] = r.device_ms_a;
      if (!std::isnan(r.device_ms_b)) row["device_ms_b"] = r.device_ms_b;
      j["rows"].push_back(row);
    }
    write_file_atomically(o.json, j.dump(2) + "\n");
  }
  return kPassed;
}

}  // namespace

Command add_bench_command(CLI::App& parent) {
  auto o = std::make_shared<Options>();
  CLI::App* app = parent.add_subcommand(
      "bench", "Time each op of a YOLOv5 forward on two backends in the same run (default: every op of "
               "yolov5s at 640x640, ref against aten; GPU backends also report device time without transfers)");
  app->add_option("--model", o->model, "yolov5n, yolov5s, yolov5m, yolov5l or yolov5x")->capture_default_str();
  app->add_option("--img", o->img, "image size, a multiple of 32")->capture_default_str();
  app->add_option("--batch", o->batch, "batch size")->capture_default_str();
  app->add_option("--cases", o->cases_file, "time the cases of this case file (post-processing included) instead of --model's forward")
      ->check(CLI::ExistingFile);
  app->add_option("--op", o->op, "only this op (conv2d, silu, ...); default: every op");
  app->add_option("--filter", o->filter, "only layers whose name matches this regular expression");
  app->add_option("--backend", o->bench.backend_a, "first backend")->capture_default_str();
  app->add_option("--vs", o->bench.backend_b, "second backend")->capture_default_str();
  const auto load_plugins = add_backend_plugin_flag(app);
  app->add_option("--repeat", o->bench.repeat, "timed runs per case (median reported)")->capture_default_str();
  app->add_option("--warmup", o->bench.warmup, "untimed runs per case first")->capture_default_str();
  app->add_option("--seed", o->bench.seed, "seed of the inputs")->capture_default_str();
  app->add_option("--json", o->json, "also write the rows and totals to this JSON file");
  app->footer("Threads: PARITY_NUM_THREADS (default all cores) for parity, OpenBLAS and LibTorch alike.");
  return {app, [o, load_plugins] {
            load_plugins();
            return run_bench(*o);
          }};
}

}  // namespace parity::cli
