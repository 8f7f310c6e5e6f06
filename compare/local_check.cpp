#include "compare/local_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <regex>
#include <utility>

#include "compare/dump_reader.h"
#include "compare/output_streams.h"
#include "compare/tolerance.h"
#include "core/error.h"
#include "core/half.h"
#include "core/stats.h"
#include "kernels/backend.h"
#include "kernels/op_traits.h"
#include "kernels/torch_calls.h"

namespace parity {

namespace {

// compare_tensors names its two tensors A and B; in a local check they are the judge's output
// and the checked side's, so the values are labelled so.
std::string judge_labels(std::string reason, const char* side) {
  if (reason.rfind("A ", 0) == 0) reason.replace(0, 2, "judge ");  // "A is float32 1x3x3x3, B is ...": the shapes
  for (const auto& [from, to] : {std::pair<std::string, std::string>{": A ", ": judge "}, {", B ", std::string(", ") + side + " "}}) {
    for (size_t at = reason.find(from); at != std::string::npos; at = reason.find(from, at + to.size())) reason.replace(at, from.size(), to);
  }
  return reason;
}

}  // namespace

ReadCall read_call(const LayerSide& s) {
  ReadCall r;
  r.line = s.line;
  if (s.call) {
    r.op = s.call->op();
    r.call.emplace(*s.call);
    return r;
  }
  const std::string& line = s.line;
  try {
    r.op = op_name_of(line);
    r.call.emplace(line);
  } catch (const Error& e) {
    r.error = e.what();
  }
  return r;
}

// The judge ran: the side passes unless an output differs, or (structural) their counts do.
bool LocalCheck::ran_with_outputs(SideCheck& c, const LayerSide& s, const std::vector<Tensor>& judged) {
  c.ran = true;
  c.ok = judged.size() == s.outputs.size();
  if (!c.ok) {
    c.structural = true;
    c.note = std::to_string(s.outputs.size()) + " outputs where the call has " + std::to_string(judged.size());
  }
  return c.ok;
}



namespace {

// A dot product autocast runs in its reduced type: parity's conv2d, or a torch call the table marks.
bool lowp(const ReadCall& read) {
  const TorchCall* t = torch_call(read.op);
  return (t && t->lowp) || (read.call && read.call->traits().dot_products);
}

// One whose half CPU kernels round once a sum of exact products in float32 (parity's conv2d is
// oneDNN's there), on these inputs. ATen's CPU linear does so where it folds into addmm (a
// contiguous input of 2 or 3 dims); on 4 dims (ConvNeXt's [N, H, W, C]) or a strided 3-dim input it
// adds the bias to the sum already rounded to the type, and on some strided 2-dim ones
// (pad_packed_sequence's batch_first output) it takes a path that rounds otherwise again.
bool fp32_sum(const ReadCall& read, const SideJudging& how) {
  const TorchCall* t = torch_call(read.op);
  if (t && t->bias_after && (how.strided_inputs || (how.first_input_rank != 2 && how.first_input_rank != 3))) return false;
  return (t && t->fp32_sum) || (read.call && read.call->traits().dot_products);
}

}  // namespace

LocalCheck::LocalCheck(const std::string& name, const JudgeOptions& o, const SideJudging& how, const ReadCall& read)
    : name_(name), o_(o), read_(read), profile_(precision_profile(how.profile)), autocast_to_(lowp(read) ? how.autocast_to : HalfType::None),
      half_(half_of(how.profile)), float16_(how.float16), inputs_rounded_(how.inputs_rounded) {
  if (how.exact_inputs && fp32_sum(read, how)) profile_.input_bits = 23;  // dot_product_bound_scale: no input rounding term
  // No kernel of it rounds its inputs first, in any precision (an FFT: cuFFT's half transforms
  // take half inputs): its terms are the inputs as recorded.
  if (const TorchCall* t = torch_call(read.op); t && t->exact_terms) profile_.input_bits = 23;
  // A half run on the CPU whose kernel for this call may work in the type itself: torch 1.13's
  // norms over a dimension that is not innermost in memory (0.04 K units of bfloat16 measured, a
  // sequential sum's; over the trailing dims of a contiguous input they sum in float32), and its
  // linear and cubic interpolation, which weigh and place their samples in the type, and maps that
  // compute in it (logit's x / (1 - x)). Its partial sums are allowed the type's rounding, not
  // float32's.
  const TorchCall* t = torch_call(read.op);
  const bool in_type = t && (t->half_weights || t->half_inside || (t->half_sum && (how.strided_inputs || !norm_sums_in_float32(read.line, how.first_input_rank))));
  if (how.exact_inputs && in_type) u_sum_ = profile_.u_out();
  // Where an interpolation samples is worked out in float32 at least (the judge's, in float64):
  // in the type itself on a half CPU run.
  if (t && t->half_weights) sample_unit_ = how.exact_inputs ? profile_.u_out() : 0x1p-24;
  // Its half CPU kernel normalises in the type (torch 1.13's layer_norm and group_norm: x times
  // 1/s, plus -m/s, times w, plus b, each step rounded): 8 of the type's units of S, where up to
  // 4.5 were measured on activations whose mean is up to 30 times their spread (beyond that the
  // kernel loses more than rounding: a row of 300 +- 0.6 came out -1192 for -5.07, and is named).
  if (how.exact_inputs && t && t->half_steps) steps_u_ = 8 * profile_.u_out();
}

// One side's local check: the judge runs the side's call on the side's own inputs (or LibTorch
// runs a torch call parity has no op for), and each output must match what it gives.
SideCheck LocalCheck::run(const LayerSide& s, const char* s_label, bool recorded, const std::vector<Tensor>& given,
                          std::optional<TorchCallResult>& judged) const {
  SideCheck c;
  const ReadCall& read = read_;
  std::vector<Tensor> inputs = given;  // what the side's kernel computed on: as recorded, or rounded as autocast rounds
  round_floats(inputs, autocast_to_);
  const Backend& judge = backend(o_.judge);
  if (!recorded) {
    c.note = "its inputs were not recorded";
    return c;
  }
  if (const std::string why = judge.unavailable_reason(); !why.empty()) {
    c.note = "the judge (" + judge.name() + ") cannot run here: " + why;
    return c;
  }
  if (!judge.supports(read.op)) return torch_call_check(s, read, s_label, inputs, judged, "the judge (" + judge.name() + ") has no " + read.op);
  if (!read.call) {
    c.note = "the judge (" + judge.name() + ") refuses these inputs: " + read.error;
    return c;
  }
  if (s.judged) judged = TorchCallResult{*s.judged, {}, {}};
  if (!judged) {
    try {
      judged = TorchCallResult{run_in_type(judge, *read.call, inputs), {}, {}};  // --judge aten at float16 on a CPU
    } catch (const Error& e) {
      c.note = "the judge (" + judge.name() + ") refuses these inputs: " + e.what();
      return c;
    }
  }
  if (!ran_with_outputs(c, s, judged->outputs)) return c;
  for (size_t k = 0; k < judged->outputs.size() && c.ok; ++k) {
    OutputCheck r = against_judge(s, k, *read.call, read.op, judged->outputs[k], inputs);
    if (r.diff.state == State::Failed && !r.diff.structural) within_input_rounding(s, k, *read.call, read.op, judged->outputs[k], inputs, r);
    take_output_check(c, output_role(s.roles, k), r, s_label);
  }
  return c;
}

// A float output beyond tolerance of an op with one answer and no dot-product bound (add, mul,
// silu...), judged again allowing, per element, twice what moving each float input by one unit
// in its last place moves the judge's result: a float64 run written as float32 recorded its
// inputs rounded, and a cancelling x + y (-269.75 + 265.11, box arithmetic) turns that rounding
// into more than the output's own tolerance. Asked only of an output beyond tolerance (the judge
// runs once more per float input); kept when it passes, with a note.
void LocalCheck::within_input_rounding(const LayerSide& s, size_t k, const Call& call, const std::string& op, const Tensor& expected,
                           const std::vector<Tensor>& inputs, OutputCheck& r) const {
  if (call.traits().dot_products || call.traits().check_answer || !is_floating(expected.dtype())) return;
  const Backend& judge = backend(o_.judge);
  Tensor moved(DType::Float64, expected.shape());
  double* by = moved.mutable_data<double>();
  std::fill(by, by + moved.numel(), 0.0);
  try {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!is_floating(inputs[i].dtype())) continue;
      std::vector<Tensor> nudged = inputs;
      nudged[i] = one_ulp_up(inputs[i]);
      const std::vector<Tensor> out = judge.run(call, nudged);
      if (k >= out.size() || out[k].shape() != expected.shape()) return;
      for (int64_t e = 0; e < expected.numel(); ++e) by[e] += 2 * std::fabs(element_as_double(out[k], e) - element_as_double(expected, e));
    }
  } catch (const Error&) {
    return;  // no allowance: the judgement stands
  }
  const Comparable p = comparable(expected, whole_output(s, k));
  Tolerance tol = layer_tolerance(o_, profile_, name_, op, &call, k, p.dtype, inputs);
  widen(tol, std::move(moved));
  TensorDiff again = compare_tensors(p.x, p.y, tol);
  if (again.state == State::Failed) return;
  again.reason = "within what rounding its inputs by one unit in the last place moves the result";
  r.diff = std::move(again);
}

// Each element one unit in the last place up (toward +inf), in the tensor's own dtype.
Tensor LocalCheck::one_ulp_up(const Tensor& t) {
  Tensor out = t.clone();
  if (t.dtype() == DType::Float32) {
    float* v = out.mutable_data<float>();
    for (int64_t i = 0; i < t.numel(); ++i) v[i] = std::nextafter(v[i], INFINITY);
  } else if (t.dtype() == DType::Float64) {
    double* v = out.mutable_data<double>();
    for (int64_t i = 0; i < t.numel(); ++i) v[i] = std::nextafter(v[i], double(INFINITY));
  } else if (t.dtype() == DType::Float16) {
    Half* v = out.mutable_data<Half>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      const uint16_t b = v[i].bits;
      if ((b & 0x7c00u) == 0x7c00u) continue;  // Inf and NaN stay
      v[i].bits = b == 0x8000u ? uint16_t(1) : (b & 0x8000u) ? uint16_t(b - 1) : uint16_t(b + 1);
    }
  }
  return out;
}

// Side s's output k against the judge's `expected`: streamed from where it is stored when it
// is a float output of the judge's dtype and shape and the op has one correct answer (its
// bytes checked against the store's record before any figure is used), else loaded whole and
// judged by judge_output, which asks the op's check_answer.
LocalCheck::OutputCheck LocalCheck::against_judge(const LayerSide& s, size_t k, const Call& call, const std::string& op, const Tensor& expected,
                          const std::vector<Tensor>& inputs) const {
  OutputCheck r;
  const bool dots = call.traits().dot_products && k == 0;
  const Tensor& listed = s.outputs[k];  // where the side's output is stored, its dtype and shape only
  if (is_stored(s, k) && !call.traits().check_answer && is_floating(expected.dtype()) && expected.dtype() == listed.dtype() &&
      expected.shape() == listed.shape()) {
    const Tolerance tol = layer_tolerance(o_, profile_, name_, op, &call, k, expected.dtype(), inputs);
    const auto keep = std::make_shared<const std::vector<int64_t>>(sampled_elements(&call, k, expected.shape(), inputs));
    const StreamedPair p =
        stream_pair(expected.dtype(), expected.shape(), tol, *keep, PieceSource{nullptr, &expected}, PieceSource{&s.stored[k], nullptr});
    s.stored[k].check(p.hash_b);  // a corrupt dump stops here, before any figure is used
    r.diff = p.diff;
    if (dots) r.stats = precision_stats(call, k, inputs, expected.shape(), values_of(expected), kept_values(keep, p.kept_b, name_), profile_);
    return r;
  }
  const Comparable p = comparable(expected, whole_output(s, k));
  const Tolerance tol = layer_tolerance(o_, profile_, name_, op, &call, k, p.dtype, inputs);
  r.diff = judge_output(call, k, inputs, p.x, p.y, tol);
  if (dots && !r.diff.structural) r.stats = precision_stats(call, k, inputs, p.x, p.y, profile_);
  return r;
}

// A side that ran in float16 holding Inf of the judge's sign (or NaN, which Inf breeds) where the
// judge's value is finite but rounds beyond float16's largest (65504; from 65520 on): the run
// overflows its type (the model's values do not fit float16), which no correct kernel avoids. ""
// otherwise. The first NaN/Inf mismatch is the worst element (tensor_compare.h).
std::string LocalCheck::overflow_note(const TensorDiff& d) const {
  const bool overflowed = std::isnan(d.worst_b) || (std::isinf(d.worst_b) && (d.worst_b > 0) == (d.worst_a > 0));
  if (float16_ && d.nonfinite_mismatches > 0 && std::isfinite(d.worst_a) && std::fabs(d.worst_a) >= 65520 && overflowed) {
    return "; the judge's value there is beyond float16's largest (65504): this run overflows float16";
  }
  return "";
}

// The rules for one output of a local check: beyond tolerance fails the side (saying what the
// errors look like), a failed statistical test fails it as precision, and another correct
// answer passes, saying which freedom it took (nms, argsort).
void LocalCheck::take_output_check(SideCheck& c, const std::string& role, const OutputCheck& r, const char* s_label) const {
  if (r.diff.state == State::Failed) {
    c.ok = false, c.structural = r.diff.structural;
    c.note = role + ": " + judge_labels(r.diff.reason, s_label);
    if (const std::string hint = reduced_precision_hint(r.stats, profile_); !hint.empty()) c.note += "; " + hint;
    c.note += overflow_note(r.diff);
  } else if (r.stats.failed) {
    c.ok = false, c.statistical = true;
    c.note = role + ": " + precision_failure_note(r.stats, profile_);
  } else if (r.diff.state == State::Passed && !r.diff.reason.empty()) {
    c.note += (c.note.empty() ? "" : "; ") + role + ": " + r.diff.reason;
  }
}

// A call parity has no op for, as parity_torch records it (`torch.<name>`): where LibTorch can
// run it again from its line alone (kernels/aten/torch_dispatch.cpp), in float64 on the side's
// own inputs, its outputs are judged against that within the bound the call's kind allows.
// Otherwise `unchecked` and why LibTorch could not either.
SideCheck LocalCheck::torch_call_check(const LayerSide& s, const ReadCall& read, const char* s_label, const std::vector<Tensor>& inputs,
                           std::optional<TorchCallResult>& judged, const std::string& unchecked) const {
  SideCheck c;
  if (!is_torch_call(read.op)) {
    c.note = unchecked;
    return c;
  }
  if (!judged && passes_judged_in_float32(s, read, inputs)) {
    c.ran = c.ok = true;
    return c;
  }
  if (!judged) {
    try {
      judged = aten_plugin().torch_call(s.line, inputs);
    } catch (const Error& e) {
      c.note = unchecked + ", and LibTorch cannot run it again here: " + e.what();
      return c;
    }
  }
  if (!ran_with_outputs(c, s, judged->outputs)) return c;
  bool indices_checked = false;
  if (const std::string why = tied_indices(s, read, inputs, judged->outputs, indices_checked); !why.empty()) {
    c.ok = false;
    c.note = output_role(s.roles, judged->outputs.size() - 1) + ": " + why + " (the check: LibTorch's gather on " + s_label + "'s own input)";
    return c;
  }
  for (size_t k = 0; k < judged->outputs.size() && c.ok; ++k) {
    if (k + 1 == judged->outputs.size() && indices_checked) continue;
    TensorDiff d = against_torch(s, read, k, *judged, inputs);
    if (d.state == State::Failed && !d.structural) d = with_numbers_rounded(s, read, k, inputs, std::move(d));
    if (d.state == State::Failed) {
      c.ok = false, c.structural = d.structural;
      c.note = output_role(s.roles, k) + ": " + judge_labels(d.reason, s_label) + " (the judge: LibTorch in float64)" + overflow_note(d);
    }
  }
  return c;
}

namespace {

// Every element finite (a float tensor; others are).
bool all_finite(const Tensor& t) {
  if (!is_floating(t.dtype())) return true;
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (!std::isfinite(element_as_double(t, i))) return false;
  }
  return true;
}

// Whether each element of `side` lies within judge + steps[i, 0] .. judge + steps[i, 1] (an
// integer or bool output, its steps as aten_torch_call_rounding gives them).
bool within_steps(const Tensor& judge, const Tensor& side, const Tensor& steps) {
  const double* s = steps.data<double>();
  for (int64_t i = 0; i < judge.numel(); ++i) {
    const double j = element_as_double(judge, i), v = element_as_double(side, i);
    if (v < j + s[2 * i] || v > j + s[2 * i + 1]) return false;
  }
  return true;
}

// `line` with each field that is a Python float (`arg1=0.3`) rounded by `round`: tensors
// (`in0=64x64`), integers and words stay as they are.
std::string numbers_rounded(const std::string& line, const std::function<float(double)>& round) {
  static const std::regex number(R"(( [A-Za-z_][A-Za-z0-9_]*=)(-?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+(?=[eE]))(?:[eE][-+]?[0-9]+)?)(?= |$))");
  std::string out;
  auto last = line.cbegin();
  for (std::sregex_iterator it(line.begin(), line.end(), number), end; it != end; ++it) {
    const std::smatch& m = *it;
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", double(round(std::stod(m[2].str()))));  // read back as that very float
    out.append(last, m[0].first).append(m[1].str()).append(text);
    last = m[0].second;
  }
  return out.append(last, line.cend());
}

}  // namespace

// A step function of a Python number (`number_in_type`: remainder(x, 0.3), floor_divide, div with
// a rounding mode) beyond tolerance: its CPU kernels round the number to a half tensor's type
// first, CUDA's to float32, where the judge kept it exact, and a float32 kernel (a half one's
// arithmetic too) rounds the quotient before truncating it (div(x, 0.3, rounding_mode='trunc')
// at x = 0.9); near a step either answer is correct. Judged again with the number rounded each way
// (the side's half type, then float32), in float64, then computed in float32 as such a kernel
// computes (the number as recorded, then in the half type); kept when one passes, with a note.
TensorDiff LocalCheck::with_numbers_rounded(const LayerSide& s, const ReadCall& read, size_t k, const std::vector<Tensor>& inputs,
                                            TensorDiff d) const {
  const TorchCall* t = torch_call(read.op);
  if (!t || !t->number_in_type) return d;
  struct Way {
    std::string type;  // what the numbers are rounded to, "" for as recorded
    std::function<float(double)> round;
    JudgeCompute compute;
  };
  const HalfType h = half_;
  const std::string half = h == HalfType::Fp16 ? "float16" : "bfloat16";
  const auto to_half = [h](double v) { return round_to(float(v), h); };
  const auto to_float = [](double v) { return float(v); };
  std::vector<Way> ways;
  if (h != HalfType::None) ways.push_back({half, to_half, JudgeCompute::Float64});
  ways.push_back({"float32", to_float, JudgeCompute::Float64});
  ways.push_back({"", nullptr, JudgeCompute::Float32});
  if (h != HalfType::None) {
    ways.push_back({half, to_half, JudgeCompute::Float32});
    ways.push_back({"", nullptr, h == HalfType::Fp16 ? JudgeCompute::Float16 : JudgeCompute::BFloat16});
  }
  for (const Way& way : ways) {
    const std::string line = way.round ? numbers_rounded(s.line, way.round) : s.line;
    if (line == s.line && way.compute == JudgeCompute::Float64) continue;  // the judgement already made
    try {
      TensorDiff other = against_torch(s, read, k, aten_plugin().torch_call_computed_in(line, inputs, way.compute), inputs);
      if (other.state == State::Failed) continue;
      const char* in = way.compute == JudgeCompute::Float32 ? "float32" : way.compute == JudgeCompute::Float64 ? "" : half.c_str();
      other.reason = *in ? "the judge's computed in " + std::string(in) + ", as a kernel of this call computes it" : "the judge's";
      if (!way.type.empty()) other.reason += (*in ? ", its" : " with its") + std::string(" Python numbers rounded to ") + way.type;
      if (!*in) other.reason += ", as a kernel of this call rounds them";
      return other;
    } catch (const Error&) {
      continue;
    }
  }
  return d;
}

// sort, argsort, topk, median, kthvalue, cummax (`tied` in the table): the side's indices, the
// call's last output, may pick among tied values otherwise than the judge's, as correctly. They
// are checked against the side's own input and values instead (the values are judged as any
// output): why they are wrong, or "" with `checked` set when they are right.
std::string LocalCheck::tied_indices(const LayerSide& s, const ReadCall& read, const std::vector<Tensor>& inputs,
                                const std::vector<Tensor>& judged, bool& checked) const {
  const TorchCall* call = torch_call(read.op);
  if (judged.empty() || judged.size() > 2 || !call || !call->tied) return "";
  std::vector<Tensor> own;
  for (size_t k = 0; k < judged.size(); ++k) own.push_back(whole_output(s, k));
  // A stable sort orders ties by index; where the recorded inputs are the side's own rounded (a
  // float64 run written as float32), values it told apart may tie here.
  static const std::string stable = " stable=True";
  std::string line = s.line;
  if (const size_t at = line.find(stable); inputs_rounded_ && at != std::string::npos) line.erase(at, stable.size());
  try {
    const std::string why = aten_plugin().tied_indices(line, inputs, own);
    checked = why.empty();
    return why;
  } catch (const Error&) {
    return "";  // not readable as a sort: its indices are compared as any output
  }
}

// A half side's call judged first by LibTorch in float32, at half the cost of float64 (issue 39's
// local checks at bfloat16): the side's inputs are half values, exact in float32, and a correct
// float32 kernel strays from the exact result by at most the call's float32 bound, which is added
// to the side's own. Only a pass is taken from it: anything else (a failure, an output the call
// does not give, a refusal) is judged again in float64 as every other side is, so a verdict moves
// only where an output lies within the float32 judge's own error of the bound.
bool LocalCheck::passes_judged_in_float32(const LayerSide& s, const ReadCall& read, const std::vector<Tensor>& inputs) const {
  const TorchCall* t = torch_call(read.op);
  if (half_ == HalfType::None || !t || t->tied || t->number_in_type) return false;
  switch (t->bound) {
    case TorchBound::Sum: case TorchBound::Rounded: case TorchBound::InputAndOutput: case TorchBound::OneAndOutput:
    case TorchBound::Positive: case TorchBound::Softmax: case TorchBound::LogSoftmax: case TorchBound::LayerNorm:
    case TorchBound::GroupNorm:
      break;
    default:
      return false;  // bounds whose float32 run the plugin does not widen alike (windows, attention) or that retry
  }
  for (const Tensor& x : inputs) {
    if (is_floating(x.dtype()) && x.dtype() != DType::Float32) return false;  // a float64 input: float32 would round it
  }
  TorchCallResult judged;
  try {
    judged = aten_plugin().torch_call_computed_in(s.line, inputs, JudgeCompute::Float32);
  } catch (const Error&) {
    return false;
  }
  if (judged.outputs.size() != s.outputs.size()) return false;
  // float32's range is not float64's: an Inf or NaN the judge met in float32 (a sum of squares
  // past 3.4e38, whose mean is finite) would pass a side's Inf or NaN. float64 judges those.
  for (const std::vector<Tensor>* list : {&judged.outputs, &judged.bound_sums}) {
    for (const Tensor& y : *list) {
      if (y.defined() && !all_finite(y)) return false;
    }
  }
  for (size_t k = 0; k < judged.outputs.size(); ++k) {
    if (against_torch(s, read, k, judged, inputs, true).state != State::Passed) return false;
  }
  return true;
}

// Output k of a torch call against LibTorch's float64 answer: the dtype's tolerance, widened by
// the dot-product bound for a sum of K terms (tolerance.h) and, for an output still beyond it,
// by what rounding each float input by one ulp moves the result. A float64 run written as
// float32 recorded its inputs rounded, and a cancelling x - y, or exp of a large x, turns that
// rounding into more than the output's own tolerance. Asked only for an output beyond
// tolerance (it runs the call once more per float input).
TensorDiff LocalCheck::against_torch(const LayerSide& s, const ReadCall& read, size_t k, const TorchCallResult& judged,
                         const std::vector<Tensor>& inputs, bool in_float32) const {
  const Tensor& expected = judged.outputs[k];
  const Tensor& listed = s.outputs[k];  // where the side's output is stored, its dtype and shape only
  // A float output of the judge's dtype and shape is streamed from where it is stored, in place
  // (its bytes checked against the store's record before any figure is used); read whole only
  // where it is beyond the bound, for the allowance below.
  const bool streamed = is_stored(s, k) && is_floating(expected.dtype()) && expected.dtype() == listed.dtype() && expected.shape() == listed.shape();
  const Comparable p = streamed ? Comparable{expected, expected, expected.dtype()} : comparable(expected, whole_output(s, k));
  Tolerance tol = layer_tolerance(o_, profile_, name_, read.op, nullptr, k, p.dtype, inputs);
  // The float32 judge's own error: a few roundings of its output, float32's relative tolerance
  // (whatever the side's output dtype; its bound, for calls with one, below).
  if (in_float32) tol.rtol += default_tolerance(DType::Float32).rtol;
  // A selection's values (sort's, topk's, median's, cummax's: the outputs before its indices) are
  // elements of the side's own input: the judge's, bit for bit.
  if (const TorchCall* t = torch_call(read.op); t && t->tied && k + 1 < judged.outputs.size()) {
    return streamed ? stream_pair(expected.dtype(), expected.shape(), Tolerance{}, {}, PieceSource{nullptr, &expected}, PieceSource{&s.stored[k], nullptr}).diff
                    : compare_tensors(p.x, p.y, Tolerance{});
  }
  if (k < judged.bound_sums.size() && judged.bound_sums[k].defined() && judged.bound_sums[k].numel() == p.x.numel()) {
    const auto sums = std::make_shared<const Tensor>(judged.bound_sums[k]);
    double scale = dot_product_bound_scale(judged.bound_terms[k], profile_, u_sum_) + steps_u_;
    // Judged in float32: its own bound on the same S, and S itself worked out in float32 (a sum of
    // K magnitudes, within (K + 2) 2^-24 of its own).
    if (in_float32) {
      const int64_t K = judged.bound_terms[k];
      scale = (scale + dot_product_bound_scale(K, precision_profile(Precision::Fp32))) * (1 + std::max(0x1p-10, double(K + 2) * 0x1p-23));
    }
    // An Inf or NaN among the terms makes the exact value non-finite: no bound there (an infinite
    // one would pass any value), as for conv2d.
    tol.bound = [sums, scale](int64_t i) {
      const double b = scale * sums->data<double>()[i];
      return std::isfinite(b) ? b : 0.0;
    };
  }
  TensorDiff d;
  if (streamed) {
    StreamedPair sp = stream_pair(expected.dtype(), expected.shape(), tol, {}, PieceSource{nullptr, &expected}, PieceSource{&s.stored[k], nullptr});
    s.stored[k].check(sp.hash_b);  // a corrupt dump stops here, before any figure is used
    d = std::move(sp.diff);
  } else {
    d = compare_tensors(p.x, p.y, tol);
  }
  if (d.state != State::Failed || d.structural || in_float32) return d;
  // An index or truth value is allowed steps only on a side whose inputs were rounded when written
  // (below): elsewhere the nudged re-runs would be thrown away.
  if (!is_floating(expected.dtype()) && !inputs_rounded_) return d;
  const Comparable whole = streamed ? comparable(expected, whole_output(s, k)) : p;
  std::vector<Tensor> moved;
  try {
    const auto rounding = aten_plugin().torch_call_rounding;
    moved = rounding(s.line, inputs, judged.outputs, sample_unit_);
  } catch (const Error&) {
    return d;  // no allowance: the judgement above stands
  }
  if (k >= moved.size() || !moved[k].defined()) return d;
  if (!is_floating(whole.x.dtype())) {
    // Indices and truth values (searchsorted, x > y) of a side whose inputs were rounded when
    // written (a float64 run's cdf ending at 1 + 2^-52, written as 1): within the steps that
    // moving its inputs one unit either way takes the judge's answer, on the side they take it
    // to. A side whose kernel read what was written has its answer exactly.
    if (moved[k].numel() != 2 * whole.x.numel()) return d;
    return within_steps(whole.x, whole.y, moved[k]) ? TensorDiff{} : d;
  }
  if (moved[k].numel() != whole.x.numel()) return d;
  widen(tol, moved[k]);
  return compare_tensors(whole.x, whole.y, tol);
}

}  // namespace parity
