#include "runners/bench.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/gpu.h"
#include "core/stopwatch.h"
#include "kernels/backend.h"
#include "kernels/conv2d/conv2d.h"
#include "runners/inputs.h"

namespace parity {

namespace {
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Timing {
  double wall_ms, device_ms;
};

// Median wall time of whole runs, and median device time (gpu.h's span: the op's kernels
// without the input upload and output download; NaN off the GPU).
Timing time_runs(const Backend& b, const std::string& line, const std::vector<Tensor>& in, int warmup, int repeat) {
  for (int i = 0; i < warmup; ++i) b.run(line, in);
  std::vector<double> wall, device;
  for (int i = 0; i < repeat; ++i) {
    gpu_span_reset();
    const Stopwatch watch;
    b.run(line, in);
    wall.push_back(watch.ms());
    device.push_back(gpu_span_ms());
  }
  const bool on_device = std::none_of(device.begin(), device.end(), [](double d) { return std::isnan(d); });
  return {median(wall), on_device ? median(device) : std::nan("")};
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
  for (const Case& c : cases) rows.push_back({c.name, c.line});
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
        // The work one run does: conv2d's multiply-adds, or the bytes every op must move at
        // least (each input read once, each output written once).
        r.bytes = 0;
        for (const Tensor& t : in) r.bytes += double(t.nbytes());
        for (const Tensor& t : backends[0]->run(line, in)) r.bytes += double(t.nbytes());
        if (op_name_of(line) == Conv2dParams::kName) {
          const Conv2dParams p = Conv2dParams::parse(line);
          r.flops = 2.0 * double(p.output_shape().numel()) * double(p.reduction_length());
        }
      }
      const Timing t = time_runs(*backends[pass], line, in, o.warmup, o.repeat);
      (pass == 0 ? r.ms_a : r.ms_b) = t.wall_ms;
      (pass == 0 ? r.device_ms_a : r.device_ms_b) = t.device_ms;
    }
  }
  return rows;
}

}  // namespace parity
