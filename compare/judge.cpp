#include "compare/judge.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <optional>
#include <set>
#include <nlohmann/json.hpp>

#include "compare/dump_reader.h"
#include "compare/local_check.h"
#include "compare/output_streams.h"
#include "compare/tolerance.h"
#include "core/error.h"
#include "core/hash.h"
#include "core/json_nesting.h"
#include "core/stats.h"
#include "core/stopwatch.h"
#include "kernels/aten/plugin.h"
#include "kernels/backend.h"
#include "kernels/op_traits.h"
#include "kernels/torch_calls.h"

namespace parity {

// A tolerance file is a few patterns; anything near this is not one.
constexpr size_t kMaxToleranceFileBytes = size_t(16) << 20;

std::vector<std::pair<std::regex, ToleranceOverride>> read_tolerance_file(const std::string& path) {
  std::vector<std::pair<std::regex, ToleranceOverride>> out;
  nlohmann::ordered_json j;  // ordered: the last matching entry in file order wins
  const std::string text = read_json_file(path, kMaxToleranceFileBytes);
  try {
    j = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("not valid JSON: ") + e.what()).file(path);
  }
  if (!j.is_object()) throw Error("expected an object {\"<layer or op regex>\": {\"atol\": X, \"rtol\": Y}}").file(path);
  for (const auto& [key, v] : j.items()) {
    const std::string where = "entry \"" + key + "\"";
    if (!v.is_object()) throw Error(where + ": expected an object {\"atol\": X, \"rtol\": Y}").file(path);
    for (const auto& [field, value] : v.items()) {
      if (field != "atol" && field != "rtol") throw Error(where + ": unknown field \"" + field + "\" (known: atol, rtol)").file(path);
    }
    ToleranceOverride t;
    for (const auto& [field, dst] : {std::pair<const char*, double*>{"atol", &t.atol}, {"rtol", &t.rtol}}) {
      const auto it = v.find(field);
      if (it == v.end()) throw Error(where + ": missing field \"" + field + "\"").file(path);
      if (!it->is_number()) throw Error(where + ": field \"" + field + "\" must be a number, not " + it->dump()).file(path);
      *dst = it->get<double>();
      if (!(*dst >= 0) || !std::isfinite(*dst)) throw Error(where + ": field \"" + field + "\" must be finite and >= 0").file(path);
    }
    try {
      out.push_back({std::regex(key), t});
    } catch (const std::regex_error& e) {
      throw Error(where + ": bad regular expression: " + e.what()).file(path);
    }
  }
  return out;
}

Tolerance layer_tolerance(const JudgeOptions& o, const PrecisionProfile& profile, const std::string& name, const std::string& op,
                          const Call* call, size_t k, DType dtype, const std::vector<Tensor>& inputs) {
  if (is_floating(dtype)) {
    // An override replaces the whole tolerance, conv2d's per-element bound included.
    std::optional<ToleranceOverride> chosen = o.tolerance;
    for (const auto& [re, tol] : o.per_layer) {
      if (std::regex_match(name, re) || std::regex_match(op, re)) chosen = tol;
    }
    if (chosen) return Tolerance{chosen->atol, chosen->rtol, {}};
  }
  // A constant made from the numbers its line holds (torch.tensor(1e-8)) is those numbers in its
  // dtype, bit for bit: no atol under which a wrong tiny constant hides.
  if (const TorchCall* t = torch_call(op); t && t->literal) return Tolerance{};
  // A dot product's per-element bound needs the inputs (read by the call's shapes, which
  // dot_products checks they have); without them, or without a call parity reads, the dtype's.
  if (!call || (call->traits().dot_products && inputs.empty())) return profile_tolerance(dtype, profile);
  return tolerance_for(*call, k, dtype, inputs, profile);
}

namespace {

// A differing answer that is still a correct one passes, saying what made it differ.
TensorDiff accept_if(TensorDiff d, bool valid, const std::string& allowed, const std::string& violation) {
  d.structural = false;
  if (valid) {
    d.state = State::Passed;
    d.reason = "differs from the judge's, and is a correct answer too (" + allowed + ")";
  } else {
    d.state = State::Failed;
    d.reason = violation;
  }
  return d;
}

}  // namespace

TensorDiff judge_output(const Call& call, size_t k, const std::vector<Tensor>& inputs, const Tensor& expected,
                        const Tensor& actual, const Tolerance& tol) {
  TensorDiff d = compare_tensors(expected, actual, tol);
  // Asked for output 0 of the judge's dtype and rank (OpTraits::check_answer): its length may differ.
  if (d.state != State::Failed || k != 0 || actual.dtype() != expected.dtype() || actual.shape().rank() != expected.shape().rank()) {
    return d;
  }
  const OpTraits& op = call.traits();
  if (!op.check_answer) return d;
  const AnswerCheck c = op.check_answer(call, inputs, actual);
  return accept_if(d, c.valid, c.allowed, c.violation);
}

const char* sides_name(Sides s) {
  switch (s) {
    case Sides::None: return "";
    case Sides::A: return "A";
    case Sides::B: return "B";
    case Sides::Both: return "A and B";
  }
  return "?";
}

Sides LayerVerdict::defective() const {
  return Sides(int(a.ran && !a.ok) | (int(b.ran && !b.ok) << 1));
}

const PrecisionStats* LayerVerdict::precision_stats() const {
  for (const OutputVerdict& t : outputs) {
    if (t.stats.samples > 0) return &t.stats;
  }
  return nullptr;
}

const TensorDiff* LayerVerdict::worst() const {
  const TensorDiff* w = nullptr;
  for (const OutputVerdict& t : outputs) {
    if (!w || t.diff.bad > w->bad || (t.diff.bad == w->bad && t.diff.max_abs > w->max_abs)) w = &t.diff;
  }
  return w;
}

namespace {

// Float16 inputs widened to float32 (exactly), so the judge and the bounds read every input as
// the call's float32; other tensors as they are.
std::vector<Tensor> float32_inputs(std::vector<Tensor> inputs) {
  for (Tensor& t : inputs) {
    if (t.dtype() == DType::Float16) t = float_values_as(t, DType::Float32);
  }
  return inputs;
}

// A PyTorch call whose output is a constant its arguments give (zeros, ones, full, arange, fill_):
// all zeros or all false is its right answer, not a sign that it proves little (MISTRUSTED).
bool fills_constants(const std::string& op) {
  const TorchCall* c = torch_call(op);
  return c && c->fills;
}

// A PyTorch call whose output holds whatever memory held (torch.empty): nothing to compare.
bool uninitialised(const std::string& op) {
  const TorchCall* c = torch_call(op);
  return c && c->uninitialised;
}

// The op word of a line.
std::string read_op(const std::string& line) { return line.substr(0, line.find(' ')); }

class LayerJudge {
 public:
  LayerJudge(const std::string& name, const LayerSide& a, const LayerSide& b, const std::function<bool()>& same_inputs, const JudgeOptions& o)
      : name_(name), a_(a), b_(b), same_inputs_(same_inputs), o_(o), call_a_(read_call(a)), call_b_(read_call(b)) {}

  // The element-wise pass: v.differs says whether local checks are due.
  LayerVerdict compare() {
    const Stopwatch watch;
    choose_profile();
    compare_outputs();
    if (!v_.differs && !v_.structural && float32_side_under_half_tolerance()) {
      v_.differs = true;
      differences_ = std::string("within ") + profile_->name + "'s tolerance, a side that computed it in float32 held to float32's";
    }
    if (v_.differs && !v_.structural && uninitialised(read_op(a_.line))) {
      // torch.empty: whatever memory held. Its shape and dtype are compared, its values never.
      v_.differs = false;
      v_.state = State::Passed;
      v_.reason = "uninitialised memory (" + read_op(a_.line) + "): its values are not compared";
      for (OutputVerdict& t : v_.outputs) t.diff.state = State::Passed;
    }
    if (!v_.differs && !fills_constants(read_op(a_.line))) {
      for (const OutputVerdict& t : v_.outputs) {
        if (t.diff.state == State::Mistrusted && v_.state == State::Passed) v_.state = State::Mistrusted, v_.reason = t.role + ": " + t.diff.reason;
      }
    } else if (v_.differs) {
      v_.reason = differences_;
    }
    v_.timing.elementwise_ms = watch.ms() - v_.timing.precision_ms;
    return v_;
  }

  // The local checks of a verdict compare() left differing.
  void check(LayerVerdict& v) {
    const Stopwatch watch;
    v_ = std::move(v);
    profile_ = &precision_profile(v_.profile);
    differences_ = v_.reason;
    std::optional<TorchCallResult> judged_a;
    const SideJudging how_a = side_judging(0), how_b = side_judging(1);
    v_.a = LocalCheck(name_, o_, how_a, call_a_).run(a_, "A", bool(a_.inputs), inputs_of_a(), judged_a);
    std::optional<TorchCallResult> judged_b;
    const LocalCheck local_b(name_, o_, how_b, call_b_);
    if (a_.inputs && same_inputs()) {
      // The same call on the same bytes, judged alike: the judge (deterministic) gives the same answer.
      if (a_.line == b_.line && how_a == how_b) judged_b = judged_a;
      v_.b = local_b.run(b_, "B", true, inputs_of_a(), judged_b);
    } else {
      // A's inputs and the judge's outputs on them are done with: freed before B's are made, so
      // a layer holds one side's at a time.
      judged_a.reset();
      a_inputs_.reset();
      v_.b = local_b.run(b_, "B", bool(b_.inputs), inputs_of_b(), judged_b);
    }
    verdict_from_side_checks();
    v_.timing.local_ms = watch.ms();
    v = std::move(v_);
  }

 private:
  // --precision, made coarser by the outputs' dtypes: a float16 dump is judged as fp16.
  void choose_profile() {
    v_.profile = coarsened(coarsened(o_.precision, call_a_, a_), call_b_, b_);
    // A call both sides computed in float32, one of them under autocast with every kernel inside
    // on float32 tensors (a GELU between autocast's layers), is compared at float32: two autocast
    // runs a GELU kernel 0.4% off apart passed at bfloat16's tolerance. Only a call the judge can
    // run again: beyond float32's tolerance an unchecked one would be UNCHECKED, where the runs'
    // own type passes it.
    if (is_half(v_.profile) && (a_.float32_kernels || b_.float32_kernels) && computed_in_float32(0) && computed_in_float32(1) &&
        judge_runs_again(call_a_) && judge_runs_again(call_b_)) {
      v_.profile = Precision::Fp32;
    }
    for (size_t k = 0; k < std::min(a_.outputs.size(), b_.outputs.size()); ++k) {
      const DType x = a_.outputs[k].dtype(), y = b_.outputs[k].dtype();
      if (x != y && is_floating(x) && is_floating(y)) {
        v_.widened = "A " + std::string(dtype_name(x)) + ", B " + std::string(dtype_name(y)) + ": compared in float64 under " +
                     precision_profile(v_.profile).name;
        break;
      }
    }
    profile_ = &precision_profile(v_.profile);
  }

  // How side k's own kernels are judged. Where the comparison knows each side's run (--precision
  // auto), at that run's own precision (coarsened by that side's call and outputs, as
  // choose_profile does for both): a float32 CPU run against a bfloat16 one is judged
  // at float32 on its own inputs, the bfloat16 one at bfloat16. A reduced-precision run on the CPU
  // computes exact products of its kernels' inputs (exact_inputs); under autocast those are the
  // recorded inputs rounded to the type. Otherwise both sides at the layer's profile, as given.
  SideJudging side_judging(int k) const {
    SideJudging how;
    how.profile = v_.profile;
    const SideRun& run = o_.runs[k];
    const LayerSide& side = k == 0 ? a_ : b_;
    how.float16 = side.computed_in == Precision::Fp16 ||
                  std::any_of(side.outputs.begin(), side.outputs.end(), [](const Tensor& t) { return t.dtype() == DType::Float16; });
    if (!run.precision) return how;
    how.profile = coarsened(*run.precision, k == 0 ? call_a_ : call_b_, side);
    if (is_half(how.profile) && float32_call(k)) how.profile = Precision::Fp32;
    if (is_half(how.profile) && run.autocast && side.tf32_kernels && float32_outputs(k == 0 ? call_a_ : call_b_, side, false)) {
      how.profile = Precision::Tf32;
    }
    how.exact_inputs = run.cpu && is_half(how.profile);
    how.strided_inputs = side.strided_inputs, how.first_input_rank = side.first_input_rank;
    how.float16 = how.float16 || *run.precision == Precision::Fp16;
    how.inputs_rounded = run.wider;
    // Under autocast, or where the side's outputs say its kernel computed in a half type while the
    // run's own is float32 (autocast entered inside forward), autocast's calls round their inputs
    // first; a half model's inputs are rounded already, so rounding them again changes nothing.
    if (how.exact_inputs && (run.autocast || is_half(side.computed_in))) {
      how.autocast_to = half_of(how.profile);
    }
    return how;
  }

  // Whether every float output of the side is float32 as the run held it (none held narrower and
  // written wider, none of a half call's line), and there is one, computed from inputs no producer
  // held in a half type unless `half_inputs` (a call that makes them float32 first).
  static bool float32_outputs(const ReadCall& read, const LayerSide& s, bool half_inputs) {
    // Half inputs into a float32 output (`torch.mul(a, b, out=buf)`): the kernel computed in the half type.
    if ((read.call && read.call->half() != HalfType::None) || s.computed_in != Precision::Fp32 || (s.half_inputs && !half_inputs)) return false;
    bool any = false;
    for (const Tensor& t : s.outputs) {
      if (!is_floating(t.dtype())) continue;
      if (t.dtype() != DType::Float32) return false;
      any = true;
    }
    return any;
  }

  // Whether side k's kernel computed this call in float32 inside a half run, so that it is judged
  // at float32 (a float32 kernel 2% off passed as bfloat16's rounding):
  // - a half model's call whose outputs the run held in float32 (no cast_from: a `.float()`
  //   island). Not under CPU autocast (SideRun::autocast), whose composite calls (a GRU cell) run
  //   their products in the half type inside and may return float32;
  // - under autocast (any device), one whose recording saw every kernel inside compute on float32
  //   tensors (DumpLayer::kernels_in: an add, a GELU between autocast's layers; a GRU cell's
  //   record says bfloat16);
  // - under autocast, a call autocast casts to float32 first (cdist, the losses, TorchCall::
  //   fp32_autocast), on its inputs made exactly wider, half ones included (a kNN distance 25%
  //   off passed).
  bool float32_call(int k) const {
    const SideRun& run = o_.runs[k];
    const LayerSide& side = k == 0 ? a_ : b_;
    const ReadCall& call = k == 0 ? call_a_ : call_b_;
    if ((!run.autocast || side.float32_kernels) && float32_outputs(call, side, false)) return true;
    return run.autocast && fp32_autocast(call) && float32_outputs(call, side, true);
  }

  // Side k computed this call in float32, as its run says (--precision auto): a float32 run's, or
  // one float32_call names.
  bool computed_in_float32(int k) const {
    const SideRun& run = o_.runs[k];
    if (!run.precision) return false;
    return coarsened(*run.precision, k == 0 ? call_a_ : call_b_, k == 0 ? a_ : b_) == Precision::Fp32 || float32_call(k);
  }

  // A pair compared at a half type's tolerance where a side of a half run (autocast, a half model)
  // computed the call in float32 (float32_call) and the judge can run it again, both sides' inputs
  // recorded and the outputs not identical: that side's local check is due even within the pair's
  // tolerance. Against a bfloat16 model, an autocast run's float32 SiLU 0.4% off passed as
  // bfloat16's rounding. A float32 run's calls keep the pair's tolerance against a half run (its
  // layers are checked locally where beyond it), as before.
  bool float32_side_under_half_tolerance() const {
    if (!is_half(v_.profile) || !a_.inputs || !b_.inputs) return false;
    if (std::all_of(v_.outputs.begin(), v_.outputs.end(), [](const OutputVerdict& t) { return t.identical; })) return false;
    for (int k = 0; k < 2; ++k) {
      const std::optional<Precision>& run = o_.runs[k].precision;
      if (run && is_half(*run) && float32_call(k) && judge_runs_again(k == 0 ? call_a_ : call_b_)) return true;
    }
    return false;
  }

  // Whether a local check can be made of this call: an op of parity's the judge has, or a torch
  // call the table gives an ATen operator and a bound.
  bool judge_runs_again(const ReadCall& read) const {
    if (read.call) return backend(o_.judge).supports(read.op);
    const TorchCall* t = torch_call(read.op);
    return t && !t->aten.empty() && t->bound != TorchBound::None;
  }

  static bool fp32_autocast(const ReadCall& read) {
    const TorchCall* t = torch_call(read.op);
    return t && t->fp32_autocast;
  }

  // `p` made coarser by a side's own call and outputs: a half-precision call (precision=fp16|bf16
  // on its line) is judged at that precision, though its values travel as float32; a float16
  // output at fp16, and one the run held in bfloat16 or float16 before writing it wider (a
  // reduced-precision block inside a float32 model) at that type.
  static Precision coarsened(Precision p, const ReadCall& read, const LayerSide& s) {
    if (read.call) p = coarser(p, precision_of(read.call->half()));
    p = coarser(p, s.computed_in);
    for (const Tensor& t : s.outputs) {
      if (is_floating(t.dtype())) p = coarser(p, precision_of(t.dtype()));
    }
    return p;
  }

  const std::vector<Tensor>& inputs_of_a() {
    if (!a_inputs_ && a_.inputs) a_inputs_ = float32_inputs(a_.inputs());
    if (!a_inputs_) a_inputs_.emplace();
    return *a_inputs_;
  }

  // A against B, output by output.
  void compare_outputs() {
    if (a_.outputs.size() != b_.outputs.size()) {
      v_.differs = true;
      differences_ = "output counts differ: A " + std::to_string(a_.outputs.size()) + ", B " + std::to_string(b_.outputs.size());
    }
    for (size_t k = 0; k < std::min(a_.outputs.size(), b_.outputs.size()); ++k) {
      v_.outputs.push_back(compare_output(k));
      note_difference(v_.outputs.back());
    }
  }

  // Output k, A against B: identical when hashes computed from both sides' bytes match, else the
  // element-wise figures (streamed where both are stored) and the effective precision.
  OutputVerdict compare_output(size_t k) {
    OutputVerdict t;
    t.role = output_role(a_.roles, k);
    const Tensor &x = a_.outputs[k], &y = b_.outputs[k];
    const bool streamed = is_stored(a_, k) && is_stored(b_, k);
    if (!streamed && k < a_.hashes.size() && k < b_.hashes.size() && !a_.hashes[k].empty() && a_.hashes[k] == b_.hashes[k] &&
        x.dtype() == y.dtype() && x.shape() == y.shape()) {
      identical(x.dtype(), x.numel(), mistrust_reason(x), t);
      return t;
    }
    const Call* call = call_a_.call ? &*call_a_.call : nullptr;
    // A dot product's bound and statistical test need A's inputs; other tolerances do not.
    static const std::vector<Tensor> none;
    const Comparable c = comparable(x, y);
    const bool same_form = c.x.dtype() == c.y.dtype() && x.shape() == y.shape();
    const std::vector<Tensor>& in = call && call->traits().dot_products && same_form ? inputs_of_a() : none;
    const Tolerance tol = local_checks_sooner(layer_tolerance(o_, *profile_, name_, call_a_.op, call, k, c.dtype, in), call, k);
    ElementValues xv = values_of(c.x), yv = values_of(c.y);
    if (streamed && same_form && is_floating(x.dtype())) {
      bool same_bytes = false;
      t.diff = stream_outputs(k, x, tol, call, in, xv, yv, same_bytes);
      if (same_bytes) {
        // Equal hashes computed from the bytes, whatever the manifests said: identical.
        identical(x.dtype(), x.numel(), t.diff.state == State::Mistrusted ? t.diff.reason : "", t);
        return t;
      }
    } else if (streamed) {
      throw Error("layer " + name_ + ": " + t.role + " offered as stored but not comparable as streamed (" +
                  std::string(dtype_name(x.dtype())) + " " + x.shape().str() + ", " + std::string(dtype_name(y.dtype())) + " " +
                  y.shape().str() + ")");
    } else {
      t.diff = compare_tensors(c.x, c.y, tol);
    }
    own_precision(k, c, xv, yv, t);
    if (t.stats.samples == 0 && is_floating(c.x.dtype()) && same_form) {
      t.stats = call ? precision_stats(*call, k, in, c.x.shape(), xv, yv, *profile_) : result_stats(c.x.numel(), xv, yv);
    }
    return t;
  }

  // A dot product's bound at fp16 or bf16 allows, A against B, for both sides' inputs rounded to
  // the type: about 2^-8 of sum |x w| at bf16, which over thousands of terms exceeds a quarter of
  // the output (a wrong element hides there, and no local check would run). Here the pass asks
  // for local checks once an element uses an eighth of that bound, and each side is then judged
  // on its own inputs (LocalCheck), where no such allowance is needed on the CPU.
  static Tolerance local_checks_sooner(Tolerance tol, const Call* call, size_t k, Precision profile) {
    if (!is_half(profile) || !call || !call->traits().dot_products || k != 0 || !tol.bound) return tol;
    tol.bound_share = 1.0 / 8;
    const std::function<double(int64_t)> full = tol.bound;
    tol.bound = [full](int64_t i) { return full(i) / 8; };
    tol.bound_floor /= 8;
    return tol;
  }
  Tolerance local_checks_sooner(Tolerance tol, const Call* call, size_t k) const { return local_checks_sooner(std::move(tol), call, k, v_.profile); }

  // An output beyond tolerance, or failing the statistical test, asks for local checks; the
  // first such difference is the one the reason names.
  void note_difference(const OutputVerdict& t) {
    if (t.identical) return;
    if (t.diff.state == State::Failed) {
      v_.differs = true;
      if (differences_.empty()) differences_ = t.role + ": " + t.diff.reason;
    } else if (t.stats.failed) {
      v_.differs = true;
      if (differences_.empty()) {
        differences_ = t.role + ": " + (t.stats_side.empty() ? "" : t.stats_side + "'s own ") + precision_failure_note(t.stats, *profile_);
      }
    }
  }

  static void identical(DType dtype, int64_t count, const std::string& mistrust, OutputVerdict& t) {
    t.identical = true;
    t.diff = TensorDiff{};
    t.diff.count = count;
    t.stats.samples = is_floating(dtype) ? count : 0;
    if (!mistrust.empty()) t.diff.state = State::Mistrusted, t.diff.reason = mistrust;
  }

  // Output k of both sides streamed from where they are stored (stream_pair), both hashes
  // checked against the store's record before any figure is used, and the elements the
  // precision figures read kept (into xv, yv). `x` gives the dtype and shape only.
  TensorDiff stream_outputs(size_t k, const Tensor& x, const Tolerance& tol, const Call* call, const std::vector<Tensor>& in,
                            ElementValues& xv, ElementValues& yv, bool& same_bytes) {
    const auto keep = std::make_shared<const std::vector<int64_t>>(sampled_elements(call, k, x.shape(), in));
    StreamedPair s = stream_pair(x.dtype(), x.shape(), tol, *keep, PieceSource{&a_.stored[k], nullptr}, PieceSource{&b_.stored[k], nullptr});
    a_.stored[k].check(s.hash_a), b_.stored[k].check(s.hash_b);  // a corrupt dump stops here, before any figure is used
    same_bytes = s.hash_a == s.hash_b;
    xv = kept_values(keep, s.kept_a, name_), yv = kept_values(keep, s.kept_b, name_);
    return s.diff;
  }

  // conv2d: each side's own precision on its own inputs (sampled, no judge run); the worse side's
  // figures go into the row. Nothing when a side's inputs were not recorded.
  void own_precision(size_t k, const Comparable& c, const ElementValues& xv, const ElementValues& yv, OutputVerdict& t) {
    if (!call_a_.call || !call_b_.call || !call_a_.call->traits().dot_products || k != 0 || !a_.inputs || !b_.inputs || c.x.dtype() != DType::Float32 ||
        c.y.dtype() != DType::Float32 || a_.line != b_.line) {
      return;
    }
    try {
      const Stopwatch watch;
      const PrecisionStats pa = own_precision_stats(*call_a_.call, k, inputs_of_a(), c.x.shape(), xv, *profile_);
      const PrecisionStats pb = own_precision_stats(*call_b_.call, k, inputs_of_b(), c.y.shape(), yv, *profile_);
      v_.timing.precision_ms += watch.ms();
      if (pa.samples == 0 || pb.samples == 0) return;
      const bool b_worse = pb.failed != pa.failed ? pb.failed : (!pb.exact && (pa.exact || pb.bits < pa.bits));
      t.stats = b_worse ? pb : pa;
      t.stats_side = b_worse ? "B" : "A";
    } catch (const Error&) {
      // Inputs that do not fit the call: the local check says so; no figures here.
    }
  }

  const std::vector<Tensor>& inputs_of_b() {
    if (same_inputs()) return inputs_of_a();
    if (!b_inputs_ && b_.inputs) b_inputs_ = float32_inputs(b_.inputs());
    if (!b_inputs_) b_inputs_.emplace();
    return *b_inputs_;
  }

  std::array<std::pair<const char*, const SideCheck*>, 2> sides() const { return {{{"A", &v_.a}, {"B", &v_.b}}}; }

  // The verdict from the two local checks: a side that does not match the judge fails the layer;
  // both matching explain the difference; otherwise it stays UNCHECKED, saying why.
  void verdict_from_side_checks() {
    const Sides bad = v_.defective();
    if (bad != Sides::None) {
      v_.state = State::Failed;
      std::string why;
      for (const auto& [side, c] : sides()) {
        if (c->ran && !c->ok) {
          why += std::string(why.empty() ? "" : "; ") + side + " is not the judge's on " + side + "'s own inputs: " + c->note;
          v_.structural = v_.structural || c->structural;
        }
      }
      v_.reason = why;
    } else if (v_.a.ran && v_.b.ran) {
      v_.explained = true;
      v_.reason = kMatchesOnOwnInputs + differences_;
      for (const auto& [side, c] : sides()) {
        if (!c->note.empty()) v_.reason += std::string("; ") + side + " " + c->note;
      }
    } else {
      v_.state = State::Unchecked;
      std::string why;
      for (const auto& [side, c] : sides()) {
        if (!c->ran) why += std::string(why.empty() ? "" : ", ") + side + ": " + c->note;
      }
      v_.reason = differences_ + "; not checked locally (" + why + ")";
    }
  }

  bool same_inputs() {
    if (!same_inputs_known_) same_inputs_known_ = same_inputs_();
    return *same_inputs_known_;
  }

  const std::string& name_;
  const LayerSide &a_, &b_;
  const std::function<bool()>& same_inputs_;
  std::optional<bool> same_inputs_known_;
  const JudgeOptions& o_;
  const ReadCall call_a_, call_b_;
  LayerVerdict v_;
  const PrecisionProfile* profile_ = nullptr;
  std::string differences_;  // the first difference A against B, one line
  std::optional<std::vector<Tensor>> a_inputs_, b_inputs_;
};

}  // namespace

LayerVerdict judge_layer(const std::string& name, const LayerSide& a, const LayerSide& b, bool same_inputs,
                         const JudgeOptions& o) {
  const std::function<bool()> given = [same_inputs] { return same_inputs; };
  LayerJudge judge(name, a, b, given, o);  // one judge for both steps: inputs are loaded once
  LayerVerdict v = judge.compare();
  if (v.differs) judge.check(v);
  return v;
}

LayerVerdict compare_layer_outputs(const std::string& name, const LayerSide& a, const LayerSide& b,
                                   const std::function<bool()>& same_inputs, const JudgeOptions& o) {
  return LayerJudge(name, a, b, same_inputs, o).compare();
}

void check_layer_locally(const std::string& name, const LayerSide& a, const LayerSide& b, const std::function<bool()>& same_inputs,
                         const JudgeOptions& o, LayerVerdict& v) {
  LayerJudge(name, a, b, same_inputs, o).check(v);
}

}  // namespace parity
