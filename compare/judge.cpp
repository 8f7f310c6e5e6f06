#include "compare/judge.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <optional>
#include <set>
#include <nlohmann/json.hpp>

#include "compare/dump_reader.h"
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

// compare_tensors names its two tensors A and B; in a local check they are the judge's output
// and the checked side's, so the values are labelled so.
std::string judge_labels(std::string reason, const char* side) {
  if (reason.rfind("A ", 0) == 0) reason.replace(0, 2, "judge ");  // "A is float32 1x3x3x3, B is ...": the shapes
  for (const auto& [from, to] : {std::pair<std::string, std::string>{": A ", ": judge "}, {", B ", std::string(", ") + side + " "}}) {
    for (size_t at = reason.find(from); at != std::string::npos; at = reason.find(from, at + to.size())) reason.replace(at, from.size(), to);
  }
  return reason;
}

// Float16 inputs widened to float32 (exactly), so the judge and the bounds read every input as
// the call's float32; other tensors as they are.
std::vector<Tensor> float32_inputs(std::vector<Tensor> inputs) {
  for (Tensor& t : inputs) {
    if (t.dtype() == DType::Float16) t = float_values_as(t, DType::Float32);
  }
  return inputs;
}

// A side's line read once: its call, or (an op parity does not know, a bad line) why not. `op`
// is the line's first word either way. A call the caller read already is taken as it is.
struct ReadCall {
  std::string op;
  std::optional<Call> call;
  std::string error;
};
ReadCall read_call(const LayerSide& s) {
  ReadCall r;
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

// Two float tensors of different dtypes compare in float64, under the narrower one's tolerance.
struct Comparable {
  Tensor x, y;
  DType dtype;  // the dtype whose tolerance applies
};
Comparable comparable(const Tensor& x, const Tensor& y) {
  if (x.dtype() == y.dtype() || !is_floating(x.dtype()) || !is_floating(y.dtype()) || x.shape() != y.shape()) {
    return {x, y, x.dtype()};
  }
  const DType narrow = dtype_size(x.dtype()) < dtype_size(y.dtype()) ? x.dtype() : y.dtype();
  return {float_values_as(x, DType::Float64), float_values_as(y, DType::Float64), narrow};
}

// Where a streamed tensor's pieces come from: a stored output (read where it lies, hashed as it
// passes) or a tensor in memory.
struct PieceSource {
  const StoredOutput* stored;
  const Tensor* memory;
};

struct StreamedPair {
  TensorDiff diff;
  std::string hash_a, hash_b;  // of the bytes read from a stored side, to be checked by the caller
  std::shared_ptr<std::vector<double>> kept_a, kept_b;  // the values of the elements asked for
};

// Two float tensors of one dtype and shape compared piece by piece (TensorCompareStream: the
// figures of compare_tensors, to the bit), neither held whole unless it is in memory already.
// The elements listed in `keep` (ascending) are kept, as precision_stats reads them.
StreamedPair stream_pair(DType dtype, const Shape& shape, const Tolerance& tol, const std::vector<int64_t>& keep, PieceSource a,
                         PieceSource b) {
  StreamedPair r;
  r.kept_a = std::make_shared<std::vector<double>>(keep.size()), r.kept_b = std::make_shared<std::vector<double>>(keep.size());
  const size_t item = dtype_size(dtype);
  const int64_t n = shape.numel(), piece = TensorCompareStream::piece_elements();
  TensorCompareStream compare(dtype, shape, tol);
  ContentHasher hash_a, hash_b;
  const auto take = [&](const PieceSource& src, ContentHasher& hash, int64_t lo, size_t bytes) {
    if (src.memory) return src.memory->bytes() + size_t(lo) * item;
    const std::byte* p = src.stored->read(size_t(lo) * item, bytes);
    hash.update(p, bytes);
    return p;
  };
  size_t next = 0;  // the next element to keep
  for (int64_t lo = 0; lo < n; lo += piece) {
    const int64_t count = std::min(piece, n - lo);
    const size_t bytes = size_t(count) * item;
    const std::byte* pa = take(a, hash_a, lo, bytes);
    const std::byte* pb = take(b, hash_b, lo, bytes);
    compare.feed(pa, pb, count);
    for (; next < keep.size() && keep[next] < lo + count; ++next) {
      (*r.kept_a)[next] = element_as_double(dtype, pa, keep[next] - lo);
      (*r.kept_b)[next] = element_as_double(dtype, pb, keep[next] - lo);
    }
  }
  if (a.stored) r.hash_a = hash_a.digest();
  if (b.stored) r.hash_b = hash_b.digest();
  r.diff = compare.finish();
  return r;
}

// The elements precision_stats reads of output k (a dot product's samples need the inputs; when
// they do not fit the call, none: the figures are then left out where they are computed).
std::vector<int64_t> sampled_elements(const Call* call, size_t k, const Shape& shape, const std::vector<Tensor>& in) {
  std::optional<DotProducts> dots;
  if (call && call->traits().dot_products && k == 0 && !in.empty()) {
    try {
      dots = call->traits().dot_products(*call, in);
      if (dots->shape != shape) dots.reset();  // an output the call cannot have made: no figures
    } catch (const Error&) {
      // Inputs that do not fit the call: no dot-product figures.
    }
  }
  return precision_sample_elements(shape, dots ? &*dots : nullptr);
}

// Values by flat index of the elements a streamed comparison kept; asking for another is a bug.
// `tol` with, per element, `by` (float64, one value per element: what rounding the inputs moves
// the result by) added to its bound.
void widen(Tolerance& tol, Tensor by) {
  const auto allowance = std::make_shared<const Tensor>(std::move(by));
  const std::function<double(int64_t)> before = tol.bound;
  tol.bound = [allowance, before](int64_t i) { return (before ? before(i) : 0.0) + allowance->data<double>()[i]; };
}

ElementValues kept_values(std::shared_ptr<const std::vector<int64_t>> keep, std::shared_ptr<std::vector<double>> values,
                          const std::string& layer) {
  return [keep, values, layer](int64_t i) {
    const auto at = std::lower_bound(keep->begin(), keep->end(), i);
    if (at == keep->end() || *at != i) throw Error("layer " + layer + ": element " + std::to_string(i) + " was not kept by the streamed comparison");
    return (*values)[size_t(at - keep->begin())];
  };
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
  LayerJudge(const std::string& name, const LayerSide& a, const LayerSide& b, bool same_inputs, const JudgeOptions& o)
      : name_(name), a_(a), b_(b), same_inputs_(same_inputs), o_(o), call_a_(read_call(a)), call_b_(read_call(b)) {}

  // The element-wise pass: v.differs says whether local checks are due.
  LayerVerdict compare() {
    const Stopwatch watch;
    choose_profile();
    compare_outputs();
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
    v_.a = local_check(a_, call_a_, "A", bool(a_.inputs), inputs_of_a(), judged_a);
    std::optional<TorchCallResult> judged_b;
    if (same_inputs_ && a_.inputs) {
      // The same call on the same bytes: the judge (deterministic) gives the same answer.
      if (a_.line == b_.line) judged_b = judged_a;
      v_.b = local_check(b_, call_b_, "B", true, inputs_of_a(), judged_b);
    } else {
      // A's inputs and the judge's outputs on them are done with: freed before B's are made, so
      // a layer holds one side's at a time.
      judged_a.reset();
      a_inputs_.reset();
      v_.b = local_check(b_, call_b_, "B", bool(b_.inputs), inputs_of_b(), judged_b);
    }
    verdict_from_side_checks();
    v_.timing.local_ms = watch.ms();
    v = std::move(v_);
  }

 private:
  // --precision, made coarser by the outputs' dtypes: a float16 dump is judged as fp16.
  void choose_profile() {
    v_.profile = o_.precision;
    // A half-precision call (precision=fp16|bf16 on its line) is judged at that precision,
    // though its values travel as float32.
    for (const ReadCall* r : {&call_a_, &call_b_}) {
      if (r->call) v_.profile = coarser(v_.profile, precision_of(r->call->half()));
    }
    for (const LayerSide* s : {&a_, &b_}) {
      for (const Tensor& t : s->outputs) {
        if (is_floating(t.dtype())) v_.profile = coarser(v_.profile, precision_of(t.dtype()));
      }
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
    const bool streamed = stored(a_, k) && stored(b_, k);
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
    const Tolerance tol = layer_tolerance(o_, *profile_, name_, call_a_.op, call, k, c.dtype, in);
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

  static bool stored(const LayerSide& s, size_t k) { return k < s.stored.size() && s.stored[k].read; }
  // Output k whole: loaded from where it is stored (checked), or as the side holds it.
  static Tensor whole_output(const LayerSide& s, size_t k) { return stored(s, k) ? s.stored[k].load() : s.outputs[k]; }

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
    if (same_inputs_) return inputs_of_a();
    if (!b_inputs_ && b_.inputs) b_inputs_ = float32_inputs(b_.inputs());
    if (!b_inputs_) b_inputs_.emplace();
    return *b_inputs_;
  }

  // The judge ran: the side passes unless an output differs, or (structural) their counts do.
  static bool ran_with_outputs(SideCheck& c, const LayerSide& s, const std::vector<Tensor>& judged) {
    c.ran = true;
    c.ok = judged.size() == s.outputs.size();
    if (!c.ok) {
      c.structural = true;
      c.note = std::to_string(s.outputs.size()) + " outputs where the call has " + std::to_string(judged.size());
    }
    return c.ok;
  }

  struct OutputCheck {
    TensorDiff diff;       // the side's output against the judge's
    PrecisionStats stats;  // dot products (conv2d): the statistical test's figures
  };

  // One side's local check: the judge runs the side's call on the side's own inputs (or LibTorch
  // runs a torch call parity has no op for), and each output must match what it gives.
  SideCheck local_check(const LayerSide& s, const ReadCall& read, const char* s_label, bool recorded, const std::vector<Tensor>& inputs,
                        std::optional<TorchCallResult>& judged) const {
    SideCheck c;
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
  void within_input_rounding(const LayerSide& s, size_t k, const Call& call, const std::string& op, const Tensor& expected,
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
    Tolerance tol = layer_tolerance(o_, *profile_, name_, op, &call, k, p.dtype, inputs);
    widen(tol, std::move(moved));
    TensorDiff again = compare_tensors(p.x, p.y, tol);
    if (again.state == State::Failed) return;
    again.reason = "within what rounding its inputs by one unit in the last place moves the result";
    r.diff = std::move(again);
  }

  // Each element one unit in the last place up (toward +inf), in the tensor's own dtype.
  static Tensor one_ulp_up(const Tensor& t) {
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
  OutputCheck against_judge(const LayerSide& s, size_t k, const Call& call, const std::string& op, const Tensor& expected,
                            const std::vector<Tensor>& inputs) const {
    OutputCheck r;
    const bool dots = call.traits().dot_products && k == 0;
    const Tensor& listed = s.outputs[k];  // where the side's output is stored, its dtype and shape only
    if (stored(s, k) && !call.traits().check_answer && is_floating(expected.dtype()) && expected.dtype() == listed.dtype() &&
        expected.shape() == listed.shape()) {
      const Tolerance tol = layer_tolerance(o_, *profile_, name_, op, &call, k, expected.dtype(), inputs);
      const auto keep = std::make_shared<const std::vector<int64_t>>(sampled_elements(&call, k, expected.shape(), inputs));
      const StreamedPair p =
          stream_pair(expected.dtype(), expected.shape(), tol, *keep, PieceSource{nullptr, &expected}, PieceSource{&s.stored[k], nullptr});
      s.stored[k].check(p.hash_b);  // a corrupt dump stops here, before any figure is used
      r.diff = p.diff;
      if (dots) r.stats = precision_stats(call, k, inputs, expected.shape(), values_of(expected), kept_values(keep, p.kept_b, name_), *profile_);
      return r;
    }
    const Comparable p = comparable(expected, whole_output(s, k));
    const Tolerance tol = layer_tolerance(o_, *profile_, name_, op, &call, k, p.dtype, inputs);
    r.diff = judge_output(call, k, inputs, p.x, p.y, tol);
    if (dots && !r.diff.structural) r.stats = precision_stats(call, k, inputs, p.x, p.y, *profile_);
    return r;
  }

  // The rules for one output of a local check: beyond tolerance fails the side (saying what the
  // errors look like), a failed statistical test fails it as precision, and another correct
  // answer passes, saying which freedom it took (nms, argsort).
  void take_output_check(SideCheck& c, const std::string& role, const OutputCheck& r, const char* s_label) const {
    if (r.diff.state == State::Failed) {
      c.ok = false, c.structural = r.diff.structural;
      c.note = role + ": " + judge_labels(r.diff.reason, s_label);
      if (const std::string hint = reduced_precision_hint(r.stats, *profile_); !hint.empty()) c.note += "; " + hint;
    } else if (r.stats.failed) {
      c.ok = false, c.statistical = true;
      c.note = role + ": " + precision_failure_note(r.stats, *profile_);
    } else if (r.diff.state == State::Passed && !r.diff.reason.empty()) {
      c.note += (c.note.empty() ? "" : "; ") + role + ": " + r.diff.reason;
    }
  }

  // A call parity has no op for, as parity_torch records it (`torch.<name>`): where LibTorch can
  // run it again from its line alone (kernels/aten/torch_dispatch.cpp), in float64 on the side's
  // own inputs, its outputs are judged against that within the bound the call's kind allows.
  // Otherwise `unchecked` and why LibTorch could not either.
  SideCheck torch_call_check(const LayerSide& s, const ReadCall& read, const char* s_label, const std::vector<Tensor>& inputs,
                             std::optional<TorchCallResult>& judged, const std::string& unchecked) const {
    SideCheck c;
    if (read.op.rfind("torch.", 0) != 0 && read.op.rfind("torchvision.", 0) != 0) {
      c.note = unchecked;
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
      c.note = output_role(s.roles, 1) + ": " + why + " (the check: LibTorch's gather on " + s_label + "'s own input)";
      return c;
    }
    for (size_t k = 0; k < judged->outputs.size() && c.ok; ++k) {
      if (k == 1 && indices_checked) continue;
      const TensorDiff d = against_torch(s, read, k, *judged, inputs);
      if (d.state == State::Failed) {
        c.ok = false, c.structural = d.structural;
        c.note = output_role(s.roles, k) + ": " + judge_labels(d.reason, s_label) + " (the judge: LibTorch in float64)";
      }
    }
    return c;
  }

  // sort and topk: the side's indices may order tied values otherwise than the judge's, as
  // correctly. They are checked against the side's own input and values instead (the values are
  // judged as any output): why they are wrong, or "" with `checked` set when they are right.
  static std::string tied_indices(const LayerSide& s, const ReadCall& read, const std::vector<Tensor>& inputs,
                                  const std::vector<Tensor>& judged, bool& checked) {
    const TorchCall* call = torch_call(read.op);
    if (judged.size() != 2 || !call || !call->tied) return "";
    const std::vector<Tensor> own = {whole_output(s, 0), whole_output(s, 1)};
    try {
      const std::string why = aten_plugin().tied_indices(s.line, inputs, own);
      checked = why.empty();
      return why;
    } catch (const Error&) {
      return "";  // not readable as a sort: its indices are compared as any output
    }
  }

  // Output k of a torch call against LibTorch's float64 answer: the dtype's tolerance, widened by
  // the dot-product bound for a sum of K terms (tolerance.h) and, for an output still beyond it,
  // by what rounding each float input by one ulp moves the result. A float64 run written as
  // float32 recorded its inputs rounded, and a cancelling x - y, or exp of a large x, turns that
  // rounding into more than the output's own tolerance. Asked only for an output beyond
  // tolerance (it runs the call once more per float input).
  TensorDiff against_torch(const LayerSide& s, const ReadCall& read, size_t k, const TorchCallResult& judged,
                           const std::vector<Tensor>& inputs) const {
    const Comparable p = comparable(judged.outputs[k], whole_output(s, k));
    Tolerance tol = layer_tolerance(o_, *profile_, name_, read.op, nullptr, k, p.dtype, inputs);
    if (k < judged.bound_sums.size() && judged.bound_sums[k].defined() && judged.bound_sums[k].numel() == p.x.numel()) {
      const auto sums = std::make_shared<const Tensor>(judged.bound_sums[k]);
      const double scale = dot_product_bound_scale(judged.bound_terms[k], *profile_);
      // An Inf or NaN among the terms makes the exact value non-finite: no bound there (an infinite
      // one would pass any value), as for conv2d.
      tol.bound = [sums, scale](int64_t i) {
        const double b = scale * sums->data<double>()[i];
        return std::isfinite(b) ? b : 0.0;
      };
    }
    TensorDiff d = compare_tensors(p.x, p.y, tol);
    if (d.state != State::Failed || d.structural) return d;
    std::vector<Tensor> moved;
    try {
      const auto rounding = aten_plugin().torch_call_rounding;
      moved = rounding(s.line, inputs, judged.outputs);
    } catch (const Error&) {
      return d;  // no allowance: the judgement above stands
    }
    if (k >= moved.size() || !moved[k].defined() || moved[k].numel() != p.x.numel()) return d;
    widen(tol, moved[k]);
    return compare_tensors(p.x, p.y, tol);
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

  const std::string& name_;
  const LayerSide &a_, &b_;
  bool same_inputs_;
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
  LayerJudge judge(name, a, b, same_inputs, o);  // one judge for both steps: inputs are loaded once
  LayerVerdict v = judge.compare();
  if (v.differs) judge.check(v);
  return v;
}

LayerVerdict compare_layer_outputs(const std::string& name, const LayerSide& a, const LayerSide& b, bool same_inputs,
                                   const JudgeOptions& o) {
  return LayerJudge(name, a, b, same_inputs, o).compare();
}

void check_layer_locally(const std::string& name, const LayerSide& a, const LayerSide& b, bool same_inputs, const JudgeOptions& o,
                         LayerVerdict& v) {
  LayerJudge(name, a, b, same_inputs, o).check(v);
}

}  // namespace parity
