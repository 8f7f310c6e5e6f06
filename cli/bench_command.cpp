// parity bench: time op cases on two backends in one run and report totals and their ratio.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>
#include <tuple>

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
  HalfType dtype = HalfType::None;
  BenchOptions bench;
};

double kernel_or_wall(const BenchTiming& t) { return std::isnan(t.kernel_ms) ? t.wall_ms : t.kernel_ms; }

// Kernel time summed per op, in the order ops first appear: the speed of A against B (B's time
// over A's, above 1 when A is faster), each side's rate, and A's time against the copy anchor
// (the share of the device's copy bandwidth A reaches on memory-bound ops).
void print_by_op(const std::vector<BenchRow>& rows, const std::string& a, const std::string& b) {
  struct Sum {
    std::string op;
    int layers = 0;
    double ka = 0, kb = 0, copy = 0, bytes = 0, flops = 0;
  };
  std::vector<Sum> sums;
  for (const BenchRow& r : rows) {
    const std::string op = op_name_of(r.line);
    auto it = std::find_if(sums.begin(), sums.end(), [&](const Sum& s) { return s.op == op; });
    if (it == sums.end()) it = sums.insert(sums.end(), Sum{op});
    ++it->layers, it->ka += kernel_or_wall(r.a), it->kb += kernel_or_wall(r.b), it->copy += r.copy_ms;
    it->bytes += r.bytes, it->flops += r.flops;
  }
  auto rate = [](const Sum& s, double ms) {
    return s.flops > 0 ? fmt::format("{:.1f} TF/s", s.flops / ms * 1e-9) : fmt::format("{:.0f} GB/s", s.bytes / ms * 1e-6);
  };
  fmt::print("\nby op (kernel time){:>11} {:>12} {:>16} {:>16} {:>7} {:>12} {:>12} {:>13}\n", "", "layers", a + " ms", b + " ms",
             "speed", a + " rate", b + " rate", a + " vs copy");
  for (const Sum& s : sums) {
    fmt::print("{:<30} {:>12} {:>16.3f} {:>16.3f} {:>7.2f} {:>12} {:>12} {:>13}\n", s.op, s.layers, s.ka, s.kb, s.kb / s.ka, rate(s, s.ka),
               rate(s, s.kb), std::isnan(s.copy) || s.flops > 0 ? std::string("-") : fmt::format("{:.0f}%", 100 * s.copy / s.ka));
  }
}

int run_bench(const Options& o) {
  std::vector<Case> cases;
  const std::regex filter(o.filter.empty() ? ".*" : o.filter);
  const std::vector<Case> all = o.cases_file.empty() ? yolov5_forward(yolov5_variant(o.model), o.img, o.batch) : read_case_file(o.cases_file);
  for (const Case& c : all) {
    if ((o.op.empty() || op_name_of(c.line) == o.op) && std::regex_search(c.name, filter)) cases.push_back(c);
  }
  if (o.dtype != HalfType::None) {
    for (Case& c : cases) c.line = with_half(c.line, o.dtype);  // --dtype: the same cases in a half type
  }
  if (cases.empty()) throw Error("no case of " + o.model + " matches --op '" + o.op + "' and --filter '" + o.filter + "'");

  std::vector<std::string> lines;
  for (const Case& c : cases) lines.push_back(c.line);
  for (const std::string& note : backend_notes({o.bench.backend_a, o.bench.backend_b}, lines)) fmt::print("{}\n", note);
  Progress progress;
  const auto rows = bench_cases(cases, o.bench, [&](size_t i, size_t n) {
    progress.show(int64_t(i) + 1, int64_t(n), cases[i % cases.size()].name);
  });
  progress.clear();

  const std::string what = o.cases_file.empty() ? fmt::format("{} {}x{} batch {}", o.model, o.img, o.img, o.batch) : o.cases_file;
  fmt::print("{}: {} cases, {} threads, median of {} runs after {} warm-up\n", what, rows.size(), num_threads(), o.bench.repeat,
             o.bench.warmup);
  // GPU backends also get their kernel time (gpu.h: the kernels alone, no allocation, fill,
  // guard or transfer) and the rate it gives: TFLOP/s for conv2d, GB/s (bytes read and written
  // once) for the rest.
  auto on_gpu = [&](auto side) {
    return std::any_of(rows.begin(), rows.end(), [&](const BenchRow& r) { return !std::isnan(side(r).kernel_ms); });
  };
  const bool dev_a = on_gpu([](const BenchRow& r) { return r.a; }), dev_b = on_gpu([](const BenchRow& r) { return r.b; });
  const bool dev = dev_a || dev_b;
  auto rate = [](const BenchRow& r, double ms) {
    if (std::isnan(ms) || ms <= 0) return std::string("-");
    return r.flops > 0 ? fmt::format("{:.1f} TF/s", r.flops / ms * 1e-9) : fmt::format("{:.0f} GB/s", r.bytes / ms * 1e-6);
  };
  const std::string a = o.bench.backend_a, b = o.bench.backend_b;
  size_t w = 24;
  for (const BenchRow& r : rows) w = std::max(w, r.name.size());
  fmt::print("{:<{}} {:>12} {:>12} {:>7}", "name", w, a + " ms", b + " ms", "ratio");
  if (dev) {
    fmt::print(" {:>16} {:>16} {:>7} {:>12} {:>12} {:>9}", a + " kernel ms", b + " kernel ms", "ratio", a + " rate", b + " rate",
               "copy ms");
  }
  fmt::print("  case\n");
  BenchTiming ta, tb;
  double ka = 0, kb = 0;
  auto add = [](BenchTiming& sum, const BenchTiming& t) {
    sum.wall_ms += t.wall_ms, sum.alloc_ms += t.alloc_ms, sum.transfer_ms += t.transfer_ms, sum.guard_ms += t.guard_ms;
  };
  for (const BenchRow& r : rows) {
    add(ta, r.a), add(tb, r.b);
    fmt::print("{:<{}} {:>12.3f} {:>12.3f} {:>7.2f}", r.name, w, r.a.wall_ms, r.b.wall_ms, r.a.wall_ms / r.b.wall_ms);
    if (dev) {
      const double xa = kernel_or_wall(r.a), xb = kernel_or_wall(r.b);
      ka += xa, kb += xb;
      fmt::print(" {:>16.4f} {:>16.4f} {:>7.2f} {:>12} {:>12} {:>9.4f}", xa, xb, xa / xb, rate(r, xa), rate(r, xb), r.copy_ms);
    }
    fmt::print("  {}\n", r.line);
  }
  fmt::print("{:<{}} {:>12.1f} {:>12.1f} {:>7.2f}", "total", w, ta.wall_ms, tb.wall_ms, ta.wall_ms / tb.wall_ms);
  if (dev) fmt::print(" {:>16.3f} {:>16.3f} {:>7.2f}", ka, kb, ka / kb);
  fmt::print("  ({} / {}{})\n", a, b, dev ? "; kernel: the op's kernels alone on the GPU, wall time for CPU backends" : "");
  // Where the wall time of a GPU backend went besides its kernels.
  for (const auto& [name, t, k, on] : {std::tuple{a, ta, ka, dev_a}, std::tuple{b, tb, kb, dev_b}}) {
    if (!on) continue;
    const double named = t.alloc_ms + t.transfer_ms + t.guard_ms;
    if (named > 0) {
      fmt::print("{}: wall {:.1f} ms = kernels {:.1f} + transfers {:.1f} + allocation {:.1f} + guard checks {:.1f} + fills, launches "
                 "and syncs {:.1f}\n",
                 name, t.wall_ms, k, t.transfer_ms, t.alloc_ms, t.guard_ms, t.wall_ms - k - named);
    } else {
      fmt::print("{}: wall {:.1f} ms = kernels {:.1f} + transfers, allocation and the rest {:.1f}\n", name, t.wall_ms, k, t.wall_ms - k);
    }
  }
  if (dev) print_by_op(rows, a, b);
  if (!o.json.empty()) {
    auto side = [](const BenchTiming& t) {
      nlohmann::json j = {{"wall_ms", t.wall_ms}, {"alloc_ms", t.alloc_ms}, {"transfer_ms", t.transfer_ms}, {"guard_ms", t.guard_ms}};
      if (!std::isnan(t.kernel_ms)) j["kernel_ms"] = t.kernel_ms;
      return j;
    };
    nlohmann::json j = {{"model", o.model}, {"img", o.img}, {"batch", o.batch}, {"threads", num_threads()},
                        {"backend_a", a}, {"backend_b", b}, {"repeat", o.bench.repeat}, {"total_ms_a", ta.wall_ms},
                        {"total_ms_b", tb.wall_ms}, {"rows", nlohmann::json::array()}};
    for (const BenchRow& r : rows) {
      nlohmann::json row = {{"name", r.name}, {"line", r.line}, {"bytes", r.bytes}, {"flops", r.flops}, {"a", side(r.a)}, {"b", side(r.b)}};
      if (!std::isnan(r.copy_ms)) row["copy_ms"] = r.copy_ms;
      j["rows"].push_back(row);
    }
    write_file_atomically(o.json, j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
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
  add_dtype_flag(app, o->dtype);
  app->add_option("--json", o->json, "also write the rows and totals to this JSON file");
  app->footer("Threads: PARITY_NUM_THREADS (default all cores) for parity and LibTorch (OpenBLAS, used by the reference conv2d, runs on one thread per parity thread).");
  return {app, [o, load_plugins] {
            load_plugins();
            return run_bench(*o);
          }};
}

}  // namespace parity::cli
