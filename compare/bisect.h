#pragma once
// What `parity bisect` says of a comparison (docs/DESIGN.md, "Comparing"): its origin, the layers
// that differ only as far as their inputs do because of it, and the other origins; without an
// origin, the first difference no local check could pin on a side. And --rerun: the origin run
// again on another backend with each side's own inputs, judged against that side's output.
#include <string>
#include <vector>

#include "compare/dump_compare.h"
#include "kernels/backend.h"

namespace parity {

struct Bisection {
  const LayerReport* origin = nullptr;            // the first origin in execution order, or null
  std::vector<const LayerReport*> other_origins;  // later origins
  std::vector<std::string> propagated;            // the propagated layers, in order
  const LayerReport* first_unexplained = nullptr;  // no origin: the first structural, unchecked or propagated row, or null
};

Bisection bisection_of(const CompareResult& r);

// The origin layer run again on `be` with each side's own inputs and judged (under `jo`, the
// options the comparison judged with) against that side's recorded output: one line per side
// that recorded inputs, saying whether `be` reproduces it, and if not which of the two the judge
// (`judge_name`) agrees with.
std::vector<std::string> rerun_origin(const Backend& be, const std::string& judge_name, const JudgeOptions& jo, const Dump& a,
                                      const Dump& b, const LayerReport& origin);

}  // namespace parity
