#include "compare/dump_compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <future>
#include <map>
#include <regex>
#include <set>

#include "compare/data_flow.h"
#include "compare/input_checks.h"
#include "compare/layer_alignment.h"
#include "compare/layer_sides.h"
#include "compare/one_sided.h"
#include "compare/view_chain.h"
#include "core/stopwatch.h"
#include "core/thread_pool.h"
#include "kernels/aten/plugin.h"
#include "kernels/backend.h"
#include "kernels/torch_calls.h"

namespace parity {

std::string LayerReport::note() const {
  if (origin()) {
    const std::string side = defective == Sides::None ? "" : std::string(" (defective: ") + sides_name(defective) + ")";
    return "origin" + side + ": " + reason;
  }
  if (propagated()) {
    // What PROPAGATED means is said once, under the table: the row names its origin and what differs.
    const std::string& said_once = kMatchesOnOwnInputs;
    const bool plain = reason.rfind(said_once, 0) == 0;
    return "from " + propagated_from + (reason.empty() ? "" : ": " + (plain ? reason.substr(said_once.size()) : reason));
  }
  return reason;
}

namespace {

// The first three of `names` and ", ..." when there are more: a header line's examples.
std::string first_names(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < 3; ++i) s += (i ? ", " : "") + names[i];
  return s + (names.size() > 3 ? ", ..." : "");
}

// Outputs that differ as control flow reads them: another shape or dtype, or an integer or bool
// output (an index, a count, a mask) that differs.
bool steering_difference(const DumpLayer& l, const LayerVerdict& v) {
  for (size_t k = 0; k < v.outputs.size(); ++k) {
    const TensorDiff& d = v.outputs[k].diff;
    if (d.structural) return true;
    const std::optional<DType> dt = k < l.outputs.size() ? dtype_from_name(l.outputs[k].dtype) : std::nullopt;
    if (d.bad > 0 && dt && !is_floating(*dt)) return true;
  }
  return v.outputs.size() != l.outputs.size();
}

// What the dump level needs of a paired layer, computed before the walk in execution order
// (which decides origins and propagation): the verdict, and an input given that differs.
struct PairWork {
  int64_t ib = -1;
  std::optional<bool> same_inputs;  // asked when the judge needs it (compare_layer_outputs says when)
  std::string input_finding;
  std::vector<std::string> rounded_inputs;  // given inputs one side took rounded to --precision
  LayerVerdict verdict;
};

// Judges every pair that ran the same call, on the threads available: first the element-wise
// pass of all of them, then the local checks of those that differ. A layer's verdict depends on
// its two sides only, so the order does not matter; at most a layer per thread is in memory.
// By A index: the pairs judged.
std::map<int64_t, PairWork> judge_pairs(const DumpPair& p, const InputChecks& inputs, const JudgeOptions& o, CompareTiming& timing) {
  const Dump &a = p.a, &b = p.b;
  std::map<int64_t, PairWork> work;
  std::vector<int64_t> judged;  // A indices
  for (size_t i = 0; i < a.layers.size(); ++i) {
    if (p.b_of_a[i] < 0) continue;
    const DumpLayer &la = a.layers[i], &lb = b.layers[size_t(p.b_of_a[i])];
    // Calls with other values in the same fields are judged too, each side on its own line:
    // whether that is another call or one that followed the data is decided in execution order.
    if (!same_fields(p.canonical[0][i], p.canonical[1][size_t(p.b_of_a[i])]) || la.inputs.size() != lb.inputs.size()) {
      continue;
    }
    work[int64_t(i)].ib = p.b_of_a[i];
    judged.push_back(int64_t(i));
  }
  const auto each = [&](const std::vector<int64_t>& layers, const std::function<void(const DumpLayer&, const DumpLayer&, PairWork&)>& fn) {
    // A backend on a GPU is driven from one thread.
    const int64_t grain = runs_on_gpu(o.judge) ? int64_t(layers.size()) : 1;
    parallel_for(int64_t(layers.size()), grain, [&](int64_t lo, int64_t hi) {
      for (int64_t k = lo; k < hi; ++k) {
        PairWork& w = work.at(layers[size_t(k)]);
        fn(a.layers[size_t(layers[size_t(k)])], b.layers[size_t(w.ib)], w);
      }
    });
  };
  // Whether both sides' inputs hold the same bytes, worked out once per pair on first asking: by
  // the local checks, most inputs' hashes are known from their producers' streams.
  const auto same_inputs = [&inputs](const DumpLayer& la, const DumpLayer& lb, PairWork& w) -> std::function<bool()> {
    return [&inputs, &la, &lb, &w] {
      if (!w.same_inputs) w.same_inputs = inputs.same_input_bytes(la, lb);
      return *w.same_inputs;
    };
  };
  Stopwatch elementwise;
  each(judged, [&](const DumpLayer& la, const DumpLayer& lb, PairWork& w) {
    // Every input entry is checked against its file's bytes before the pass is over, most of
    // them against the hash of their producer's stream (the file is not read for it).
    for (const DumpTensorInfo& t : la.inputs) a.check_later(t);
    for (const DumpTensorInfo& t : lb.inputs) b.check_later(t);
    w.input_finding = inputs.given_input_difference(la, lb, w.rounded_inputs);
    const auto [sa, sb] = layer_sides(a, la, b, lb, true);
    w.verdict = compare_layer_outputs(la.name, sa, sb, same_inputs(la, lb, w), o);
  });
  // The inputs (some of whose elements the pass read) are checked before anything is reported
  // or judged further.
  a.check_owed(), b.check_owed();
  timing.elementwise_s = elementwise.seconds();
  std::vector<int64_t> differing;
  for (const int64_t i : judged) {
    if (work.at(i).verdict.differs) differing.push_back(i);
  }
  Stopwatch local;
  each(differing, [&](const DumpLayer& la, const DumpLayer& lb, PairWork& w) {
    const auto [sa, sb] = layer_sides(a, la, b, lb, false);
    check_layer_locally(la.name, sa, sb, same_inputs(la, lb, w), o, w.verdict);
  });
  timing.local_s = local.seconds();
  timing.judged = int64_t(judged.size());
  for (const int64_t i : judged) {
    const JudgeTiming& t = work.at(i).verdict.timing;
    timing.elementwise_thread_s += t.elementwise_ms / 1e3;
    timing.precision_thread_s += t.precision_ms / 1e3;
    if (!work.at(i).verdict.differs) continue;
    CompareTiming::LocalChecks& op = timing.local_by_op[a.layers[size_t(i)].op];
    op.layers += 1;
    op.thread_s += t.local_ms / 1e3;
  }
  return work;
}

// What differs between the two manifests, one line each.
std::vector<std::string> provenance(const Dump& a, const Dump& b) {
  std::vector<std::string> out;
  auto differ = [&](const std::string& what, const std::string& x, const std::string& y) {
    if (x != y) out.push_back(fmt::format("{}: A {}, B {}", what, x.empty() ? "(none)" : x, y.empty() ? "(none)" : y));
  };
  differ("model", a.model, b.model);
  const auto seed = [](const Dump& d) { return d.seed ? std::to_string(*d.seed) : std::string("not recorded"); };
  differ("seed", seed(a), seed(b));
  std::set<std::string> keys;
  for (const auto& [k, v] : a.run) keys.insert(k);
  for (const auto& [k, v] : b.run) keys.insert(k);
  for (const std::string& k : keys) {
    if (k == "model" || k == "seed") continue;
    const auto x = a.run.find(k), y = b.run.find(k);
    differ(k, x == a.run.end() ? "" : x->second, y == b.run.end() ? "" : y->second);
  }
  differ("tool version", a.tool_version, b.tool_version);
  return out;
}

// Whether an input of `l` was taken through a view indexed by a tensor the run computed.
bool indexed_input(const DumpLayer& l) {
  return std::any_of(l.inputs.begin(), l.inputs.end(), [](const DumpTensorInfo& t) { return indexed_by_data(t.via); });
}

bool has_torch_calls(const Dump& d) {
  return std::any_of(d.layers.begin(), d.layers.end(), [](const DumpLayer& l) { return is_torch_call(l.op); });
}

// The walk in execution order: each row's facts gathered (what it hands downstream known for
// every layer before it), its state decided by decide_row, what it hands downstream recorded.
class Comparer {
 public:
  Comparer(const Dump& a, const Dump& b, const CompareOptions& o)
      : o_(o), p_(pair_dumps(a, b)), excuses_(excuse_one_sided(p_, o.judge.precision)), inputs_(p_, excuses_, o.judge.precision, {o.judge.runs[0].precision, o.judge.runs[1].precision}),
        flow_(p_), types_{float_types(a), float_types(b)} {}

  CompareResult run() {
    CompareResult res;
    res.provenance = provenance(p_.a, p_.b);
    // LibTorch takes 0.3 s to load here (Debian's links 70 libraries and binds every symbol):
    // where a local check may run a torch call again, it loads on a thread of its own while the
    // element-wise pass reads. A load that fails says so where a check asks for it.
    std::future<void> loading;
    if (has_torch_calls(p_.a) || has_torch_calls(p_.b)) {
      loading = std::async(std::launch::async, [] {
        try {
          aten_plugin();
        } catch (const Error&) {
        }
      });
    }
    work_ = judge_pairs(p_, inputs_, o_.judge, res.timing);
    res.expected = rounded_inputs_line();
    // Rows in A's order; B's unpaired layers where they ran among the pairs. A pair B ran in
    // another order (layer_alignment.h) is one row, at A's place.
    int64_t next_b = 0;  // B's unpaired layers before this one have their rows
    auto emit_b_only_until = [&](int64_t end) {
      for (; next_b < end; ++next_b) {
        if (p_.a_of_b[size_t(next_b)] < 0) add(res, one_sided(1, next_b));
      }
    };
    for (size_t i = 0; i < p_.a.layers.size(); ++i) {
      const int64_t twin = p_.b_of_a[i];
      if (twin < 0) {
        add(res, one_sided(0, int64_t(i)));
        continue;
      }
      emit_b_only_until(twin);
      add(res, paired(int64_t(i), twin));
    }
    emit_b_only_until(int64_t(p_.b.layers.size()));
    if (!one_sided_casts_.empty()) {
      res.expected.push_back(fmt::format("{} cast{} on one side only, to the precision of its run ({}): {}", one_sided_casts_.size(),
                                         one_sided_casts_.size() == 1 ? "" : "s", precision_profile(o_.judge.precision).name,
                                         first_names(one_sided_casts_)));
    }
    for (const LayerReport& l : res.layers) {
      res.passed += l.passed();
      res.failed += l.state == RowState::Origin || l.state == RowState::Structural;
      res.propagated += l.propagated();
      res.mistrusted += l.state == RowState::Mistrusted;
      res.unchecked += l.state == RowState::Unchecked;
      res.structural += l.structural();
      res.explained += l.explained();
      res.structural_origins += l.structural();
    }
    return res;
  }

 private:
  void add(CompareResult& res, LayerReport r) const {
    const bool shown = !o_.layers || std::regex_search(r.name, *o_.layers);
    if (r.origin() && shown) {
      if (res.origin < 0) {
        res.origin = int64_t(res.layers.size());
      } else {
        res.other_origins.push_back(int64_t(res.layers.size()));
      }
    }
    if (shown) res.layers.push_back(std::move(r));
  }

  // The row of layer l (of `side` at index i, paired with B's ib or -1), from its facts; an
  // origin gets its id, which `here` carries downstream.
  LayerReport row(const DumpLayer& l, const LayerFacts& f, int64_t& here) {
    LayerReport r;
    r.name = l.name, r.op = l.op, r.line = l.line, r.index = l.index, r.occurrence = l.occurrence;
    RowDecision d = decide_row(f);
    r.state = d.state, r.cause = d.cause, r.defective = d.defective, r.reason = std::move(d.reason);
    if (r.propagated()) r.propagated_from = f.upstream;
    if (r.origin()) here = flow_.add_origin(r.name);
    return r;
  }

  std::string origin_name(int64_t id) const { return id >= 0 ? flow_.origin_name(id) : ""; }

  LayerReport one_sided(int side, int64_t i) {
    const DumpLayer& l = p_.side(side).layers[size_t(i)];
    int64_t up = flow_.upstream(side, i);
    LayerFacts f;
    f.only_in = side == 0 ? "A" : "B";
    f.upstream = origin_name(up);
    if (const auto it = excuses_.recomputed[side].find(i); it != excuses_.recomputed[side].end()) f.recomputed = it->second;
    f.steered_by = flow_.steering_source(side, i);
    if (const auto it = excuses_.casts[side].find(i); it != excuses_.casts[side].end()) f.precision_cast = it->second;
    LayerReport r = row(l, f, up);
    if (!f.recomputed.empty()) {
      flow_.record(side, i, false, -1, false);  // nothing downstream depends on it having been computed here
      return r;
    }
    // decide_row takes the data steering before the cast: a cast it excused is explained by nothing else.
    if (r.explained() && f.steered_by.empty() && !f.precision_cast.empty()) one_sided_casts_.push_back(l.name);
    flow_.record(side, i, true, up, r.explained());
    return r;
  }

  // Two lines of one call whose numbers that differ are, on each side, one value the two runs read
  // out of a layer's output into Python (`x / m.item()`: the data's, not the code's; the same
  // element of the k-th value each read), or the same function of each run's own type's finfo
  // constant (`clamp(min=finfo(dtype).eps * 10)`).
  bool numbers_from_the_run(const std::string& ca, const std::string& cb) const {
    const std::vector<std::string> na = numbers_in(ca), nb = numbers_in(cb);
    if (na.size() != nb.size()) return false;
    bool any = false;
    for (size_t k = 0; k < na.size(); ++k) {
      if (na[k] == nb[k]) continue;
      const double a = std::strtod(na[k].c_str(), nullptr), b = std::strtod(nb[k].c_str(), nullptr);
      if (!flow_.same_read(a, b) && !same_finfo_derivation(a, types_[0], b, types_[1])) return false;
      any = true;
    }
    return any;
  }

  // Whether an input of the pair is a view each side took at numbers its run read into Python
  // (`x[int(y0):6]`): the elements its data says.
  bool cropped_at_read_numbers(const DumpLayer& la, const DumpLayer& lb) const {
    for (size_t k = 0; k < la.inputs.size() && k < lb.inputs.size(); ++k) {
      const DumpTensorInfo &ta = la.inputs[k], &tb = lb.inputs[k];
      if (ta.has_via && tb.has_via && flow_.numbers_read_into_python(via_text(ta.via), via_text(tb.via))) return true;
    }
    return false;
  }

  LayerReport paired(int64_t ia, int64_t ib) {
    const DumpLayer &la = p_.a.layers[size_t(ia)], &lb = p_.b.layers[size_t(ib)];
    int64_t up = flow_.upstream(0, ia);
    const int64_t up_b = flow_.upstream(1, ib);
    if (up_b >= 0 && (up < 0 || up_b < up)) up = up_b;
    const std::string &ca = p_.canonical[0][size_t(ia)], &cb = p_.canonical[1][size_t(ib)];
    // Lines that differ only in numbers (input shapes, a box's size read into a Python number)
    // are the same call when those numbers followed data that steers, upstream in the dataflow;
    // any other difference (align_corners, another mode) is the model code.
    const bool steered = !flow_.steering_source(0, ia).empty() || !flow_.steering_source(1, ib).empty();
    // Once the runs' data have parted where control flow follows it (a box's integer corner),
    // tensors written into the arguments (slice bounds) may hold other values, and the shapes
    // that follow them (a crop taken at those bounds) may differ: every other field equal.
    // Only lines that differ after the data parted ask; a pair of equal lines needs none of this.
    const bool may_follow_data = flow_.steered_so_far() && ca != cb;
    std::set<std::string> roles;  // inputs a layer made on each side: their shapes may follow the data
    for (size_t k = 0; may_follow_data && k < la.inputs.size(); ++k) {
      const DumpTensorInfo* u = lb.input_named(la.inputs[k].role);
      if (u && la.inputs[k].source_layer >= 0 && u->source_layer >= 0) roles.insert(la.inputs[k].role);
    }
    const bool data_decided = may_follow_data && only_data_differs(ca, cb, roles) &&
                              (tensors_in_arguments_differ(ca, cb) || indexed_input(la) || indexed_input(lb) || cropped_at_read_numbers(la, lb));
    // A number the run read out of a tensor that differs (`.item()`) and passed on as a Python
    // number (`x / m.item()`) differs as that tensor does; one derived from its type's finfo, as
    // the type does. Once the runs' data have parted, the shapes that follow such numbers (a crop
    // at `int(y0)`) may differ too.
    const bool read_from_data = (only_numbers_differ(ca, cb) && numbers_from_the_run(ca, cb)) ||
                                (may_follow_data && flow_.numbers_read_into_python(without_tensor_shapes(ca, roles), without_tensor_shapes(cb, roles)));
    const bool shapes_followed_data = ca != cb && ((steered && only_numbers_differ(ca, cb)) || data_decided || read_from_data);
    // Directly after a layer that steers, layers pair iteration by iteration as best they can
    // (a per-detection loop): which producer feeds which is no finding there.
    const bool right_after_steering = !flow_.steered_input(0, ia).empty() || !flow_.steered_input(1, ib).empty();
    LayerFacts f;
    f.upstream = origin_name(up);
    const auto judged = work_.find(ia);  // judge_pairs judged the pairs that ran the same call
    if (judged == work_.end() || (ca != cb && !shapes_followed_data)) {
      f.other_call = lb.line;
      LayerReport r = row(la, f, up);
      r.line_b = ca != cb ? lb.line : "";
      flow_.record(0, ia, true, up, true), flow_.record(1, ib, true, up, true);
      return r;
    }
    PairWork& w = judged->second;
    const LayerVerdict& v = w.verdict;
    f.verdict = &v;
    f.given_input = w.input_finding;
    if (v.differs && up < 0 && !right_after_steering) {
      f.wiring = inputs_.rewired_input(la, lb);
      if (f.wiring.empty() && v.state != State::Failed) f.wiring = inputs_.inconsistent_input(la, lb, flow_);
    }
    // Copies are checked where the layer's outputs differ: a wrong copy that changes nothing
    // downstream is no finding.
    if (v.differs && f.given_input.empty()) f.copy_a = inputs_.copy_finding(0, la), f.copy_b = inputs_.copy_finding(1, lb);
    int64_t here = up;
    LayerReport r = row(la, f, here);
    r.line_b = ca != cb ? lb.line : "";
    const bool differs = v.differs || !f.given_input.empty();
    const bool steers = differs && (steering_difference(la, v) || ca != cb || r.structural());
    flow_.record(0, ia, differs, here, steers), flow_.record(1, ib, differs, here, steers);
    r.verdict = std::move(w.verdict);
    return r;
  }

  // The header's line for the given inputs one side took rounded to the precision: how many, the first few.
  std::vector<std::string> rounded_inputs_line() const {
    std::vector<std::string> names;
    for (const auto& [ia, w] : work_) {
      for (const std::string& role : w.rounded_inputs) names.push_back(p_.a.layers[size_t(ia)].name + " " + role);
    }
    if (names.empty()) return {};
    return {fmt::format("{} input{} no layer produced (the image, weights) one side took rounded to {}, as that precision does: {}",
                        names.size(), names.size() == 1 ? "" : "s", precision_profile(o_.judge.precision).name, first_names(names))};
  }

  const CompareOptions& o_;
  const DumpPair p_;
  const OneSidedExcuses excuses_;
  const InputChecks inputs_;
  DataFlow flow_;
  unsigned types_[2];  // the floating types each run used (float_types)
  std::map<int64_t, PairWork> work_;          // by A index: the pairs judged
  std::vector<std::string> one_sided_casts_;  // layers precision_cast excused
};

}  // namespace

CompareResult compare_dumps(const Dump& a, const Dump& b, const CompareOptions& o) { return Comparer(a, b, o).run(); }

}  // namespace parity
