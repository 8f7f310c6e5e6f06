#include "runners/bench.h"

#include <algorithm>

#include "core/error.h"
#include "core/rng.h"
#include "core/stopwatch.h"
#include "kernels/backend.h"

namespace parity {

namespace {
double median_ms(const Backend& b, const std::string& line, const std::vector<Tensor>& in, int warmup, int repeat) {
  for (int i = 0; i < warmup; ++i) b.run(line, in);
  std::vector<double> ms;
  for (int i = 0; i < repeat; ++i) {
    const Stopwatch watch;
    b.run(line, in);
    ms.push_back(watch.ms());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
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
      std::vector<Tensor> in;
      uint32_t index = 0;
      for (const TensorSpec& s : op_inputs(line)) {
        Tensor t(s.dtype, s.shape);
        RngStream(o.seed, line, index++).fill_uniform(t, -1, 1);
        in.push_back(t);
      }
      (pass == 0 ? rows[i].ms_a : rows[i].ms_b) = median_ms(*backends[pass], line, in, o.warmup, o.repeat);
    }
  }
  return rows;
}

}  // namespace parity
