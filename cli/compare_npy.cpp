#include "cli/compare_npy.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/exit_codes.h"
#include "compare/precision.h"
#include "compare/tolerance.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/npy.h"
#include "kernels/backend.h"
#include "kernels/op_traits.h"
#include "kernels/op_line.h"

namespace parity::cli {

namespace {

bool ends_with_npy(const std::string& p) { return p.size() > 4 && p.compare(p.size() - 4, 4, ".npy") == 0; }

// The tolerance the flags choose: --atol/--rtol as given; else the call's (--op), which for conv2d
// needs the call's inputs; else the dtype's default under the precision profile.
Tolerance chosen_tolerance(const NpyCompareOptions& o, const Tensor& a, const std::vector<Tensor>& inputs,
                           const PrecisionProfile& profile) {
  if (o.atol >= 0) {
    Tolerance t;
    t.atol = is_floating(a.dtype()) ? o.atol : 0;
    t.rtol = is_floating(a.dtype()) ? o.rtol : 0;
    return t;
  }
  if (o.op.empty()) return profile_tolerance(a.dtype(), profile);
  return tolerance_for(Call(o.op), 0, a.dtype(), inputs, profile);
}

// The call's inputs, checked against what the call takes, so that a bound is never computed
// from tensors of other shapes.
std::vector<Tensor> call_inputs(const NpyCompareOptions& o) {
  std::vector<Tensor> inputs;
  if (o.op.empty()) return inputs;
  for (const std::string& p : o.inputs) inputs.push_back(read_npy(p));
  const Call call(o.op);
  if (call.traits().dot_products && inputs.empty()) {
    std::string files;
    for (const TensorSpec& s : call.inputs()) files += " " + s.name + ".npy";
    throw Error("--op " + call.op() + ": its tolerance bound needs the call's inputs: --inputs" + files);
  }
  if (!inputs.empty()) check_inputs(call.op(), call.inputs(), inputs);
  return inputs;
}

std::string coords(const std::vector<int64_t>& nd) {
  std::string s = "[";
  for (size_t i = 0; i < nd.size(); ++i) s += (i ? ", " : "") + std::to_string(nd[i]);
  return s + "]";
}

nlohmann::json number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(shortest_double(v)); }

}  // namespace

bool are_npy_files(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec;
  return ends_with_npy(a) && ends_with_npy(b) && !fs::is_directory(a, ec) && !fs::is_directory(b, ec);
}

int compare_npy_files(const NpyCompareOptions& o) {
  if (!o.inputs.empty() && o.op.empty()) throw Error("--inputs: give the call they feed with --op");
  if (o.atol >= 0 && !o.op.empty()) throw Error("give --atol/--rtol or --op, not both");
  if (!o.op.empty()) {
    try {
      (void)canonical_line(o.op);
    } catch (const Error& e) {
      throw Error("--op: " + std::string(e.what()));
    }
  }
  const PrecisionProfile& profile = precision_profile(parse_precision(o.precision));
  const Tensor a = read_npy(o.a), b = read_npy(o.b);
  const std::vector<Tensor> inputs = call_inputs(o);
  const Tolerance tol = chosen_tolerance(o, a, inputs, profile);
  TensorDiff d = compare_tensors(a, b, tol);
  // Matching an all-zero or empty expected tensor proves little: said, as a dump compare says it.
  const std::string mistrust = d.state == State::Passed ? mistrust_reason(a) : "";
  const std::string state = !mistrust.empty() ? "MISTRUSTED" : state_name(d.state);
  PrecisionStats st;
  if (!d.structural && is_floating(a.dtype())) st = o.op.empty() ? result_stats(a, b) : precision_stats(Call(o.op), 0, inputs, a, b, profile);

  fmt::print("A: {} ({} {})\nB: {} ({} {})\n", o.a, dtype_name(a.dtype()), a.shape().str(), o.b, dtype_name(b.dtype()), b.shape().str());
  fmt::print("tolerance: {}{}\n", tol.str(), o.op.empty() ? "" : " (" + op_name_of(o.op) + ")");
  if (d.structural) {
    fmt::print("{}: {}\n", state, d.reason);
  } else {
    fmt::print("{}: max abs {:.3g}, mean abs {:.3g}, max rel {:.3g}, cosine {:.9f}, max ULP {}, bits {}, {} of {} elements out of tolerance",
               state, d.max_abs, d.mean_abs, d.max_rel, d.cosine, d.max_ulp, st.samples > 0 ? st.cell() : "-", d.bad, d.count);
    if (d.bad > 0 && !d.worst_nd.empty()) fmt::print(", worst at {}: A {}, B {}", coords(d.worst_nd), shortest_double(d.worst_a), shortest_double(d.worst_b));
    fmt::print("\n");
    if (!mistrust.empty()) fmt::print("  {}: a match proves little\n", mistrust);
  }
  if (!o.json.empty()) {
    const nlohmann::json j = {{"a", o.a}, {"b", o.b}, {"state", state}, {"structural", d.structural}, {"reason", d.reason},
                              {"tolerance", tol.str()}, {"count", d.count}, {"out_of_tolerance", d.bad},
                              {"max_abs", number(d.max_abs)}, {"mean_abs", number(d.mean_abs)}, {"max_rel", number(d.max_rel)},
                              {"cosine", number(d.cosine)}, {"max_ulp", d.max_ulp}, {"worst_index", d.worst_nd},
                              {"worst_a", number(d.worst_a)}, {"worst_b", number(d.worst_b)},
                              {"effective_bits", st.samples > 0 && !st.exact ? number(st.bits) : nlohmann::json(nullptr)}};
    write_file_atomically(o.json, j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  }
  if (d.structural) return kStructuralMismatch;
  return d.state == State::Passed ? kPassed : kNumericMismatch;
}

}  // namespace parity::cli
