#include "runners/bench.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/gpu.h"
#include "core/stopwatch.h"
#include "kernels/backend.h"
#include "kernels/op_traits.h"
#include "runners/inputs.h"

namespace parity {

namespace {
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Medians of whole runs, and of their kernels and harness costs (BenchTiming).
BenchTiming time_runs(const Backend& b, const std::string& line, const std::vector<Tensor>& in, int warmup, int repeat) {
  for (int i = 0; i < warmup; ++i) b.run(line, in);
  std::vector<double> wall, kernel, alloc, transfer, guard;
  for (int i = 0; i < repeat; ++i) {
    gpu_span_reset();
    gpu_costs_reset();
    const Stopwatch watch;
    b.run(line, in);
    wall.push_back(watch.ms());
    const GpuCosts& c = gpu_costs();
    // The project's kernels report each launch; LibTorch's only the span around its call.
    kernel.push_back(c.launches > 0 ? c.kernel_ms : gpu_span_ms());
    alloc.push_back(c.alloc_ms), transfer.push_back(c.transfer_ms), guard.push_back(c.guard_ms);
  }
  const bool on_device = std::none_of(kernel.begin(), kernel.end(), [](double d) { return std::isnan(d); });
  return {median(wall), on_device ? median(kernel) : std::nan(""), median(alloc), median(transfer), median(guard)};
}
}  // namespace

std::vector<BenchRow> bench_cases(const std::vector<Case>& cases, const BenchOptions& o,
                                  const std::function<void(size_t, size_t)>& progress) {
  if (o.repeat < 1 || o.warmup < 0) throw Error("bench: repeat must be >= 1 and warmup >= 0");
  const Backend* backends[2] = {&backend(o.backend_a), &backend(o.backend_b)};
  for (const Backend* be : backends) {
    if (const std::string why = be->unavailable_reason(); !why.empty()) {
      throw Error("backend " + be->name() + " cannot run here: " + why);
    }
  }
  std::vector<BenchRow> rows;
  for (const Case& c : cases) {
    rows.emplace_back();
    rows.back().name = c.name, rows.back().line = c.line;
  }
  // Each backend times every case in its own pass: interleaving them would let one library's
  // idle threads (spin-waiting OpenMP workers) slow the other down.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < cases.size(); ++i) {
      if (progress) progress(i + size_t(pass) * cases.size(), 2 * cases.size());
      const std::string& line = cases[i].line;
      // The inputs replay and golden use (valid boxes for nms, in-range indices for index).
      const std::vector<Tensor> in = seeded_inputs(cases[i], o.seed);
      BenchRow& r = rows[i];
      if (pass == 0) {
        // The work one run does: a dot-product op's multiply-adds, or the bytes every op must move at
        // least (each input read once, each output written once).
        r.bytes = 0;
        for (const Tensor& t : in) r.bytes += double(t.nbytes());
        for (const Tensor& t : backends[0]->run(line, in)) r.bytes += double(t.nbytes());
        r.copy_ms = runs_on_gpu(o.backend_a) || runs_on_gpu(o.backend_b) ? gpu_copy_ms(r.bytes, std::max(o.repeat, 3)) : std::nan("");
        if (const Call call(line); call.traits().dot_products) {  // a multiply and an add per term
          const DotProducts d = call.traits().dot_products(call, in);
          r.flops = 2.0 * double(d.shape.numel()) * double(d.terms);
        }
      }
      (pass == 0 ? r.a : r.b) = time_runs(*backends[pass], line, in, o.warmup, o.repeat);
    }
  }
  return rows;
}

}  // namespace parity
