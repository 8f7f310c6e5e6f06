#include "compare/dump_compare.h"

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "compare/nms_diff.h"
#include "compare/tolerance.h"
#include "core/error.h"
#include "kernels/backend.h"

namespace parity {

const TensorDiff* LayerReport::worst() const {
  const TensorDiff* w = nullptr;
  for (const TensorReport& t : outputs) {
    if (!w || t.diff.bad > w->bad || (t.diff.bad == w->bad && t.diff.max_abs > w->max_abs)) w = &t.diff;
  }
  return w;
}

std::vector<std::pair<std::regex, ToleranceOverride>> read_tolerance_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot open tolerance file").file(path);
  std::vector<std::pair<std::regex, ToleranceOverride>> out;
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    if (!j.is_object()) throw Error("expected an object {\"<layer or op regex>\": {\"atol\": X, \"rtol\": Y}}");
    for (const auto& [key, v] : j.items()) {
      out.push_back({std::regex(key), ToleranceOverride{v.at("atol").get<double>(), v.at("rtol").get<double>()}});
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("malformed tolerance file: ") + e.what()).file(path);
  } catch (const std::regex_error& e) {
    throw Error(std::string("bad regular expression: ") + e.what()).file(path);
  } catch (Error& e) {
    e.file(path);
    throw;
  }
  return out;
}

namespace {

class Comparer {
 public:
  Comparer(const Dump& a, const Dump& b, const CompareOptions& o) : a_(a), b_(b), o_(o) {}

  static LayerReport report_for(const DumpLayer& l) {
    LayerReport r;
    r.name = l.name, r.op = l.op, r.params = l.params, r.index = l.index;
    return r;
  }

  // `origin_upstream`: a divergence origin precedes this layer, so a layer whose inputs already
  // disagree is propagated whatever it computes: its costly checks are skipped.
  LayerReport layer(const DumpLayer& la, const DumpLayer& lb, bool origin_upstream) {
    LayerReport r = report_for(la);
    compare_inputs(la, lb, r);
    const bool settled = origin_upstream && !r.inputs_agree;
    if (la.params != lb.params) return structural(r, "B ran another call: " + lb.params);
    if (la.outputs.size() != lb.outputs.size()) {
      return structural(r, "output counts differ: " + std::to_string(la.outputs.size()) + " vs " + std::to_string(lb.outputs.size()));
    }
    std::vector<Tensor> inputs;  // A's, loaded only when a tolerance or a classification needs them
    for (size_t k = 0; k < la.outputs.size(); ++k) {
      const DumpTensorInfo &ta = la.outputs[k], &tb = lb.outputs[k];
      TensorReport t;
      t.role = ta.role;
      if (ta.dtype != tb.dtype || ta.shape != tb.shape) {
        t.diff.state = State::Failed;
        t.diff.structural = true;
        t.diff.reason = ta.role + ": A is " + ta.dtype + " " + Shape(ta.shape).str() + ", B is " + tb.dtype + " " + Shape(tb.shape).str();
      } else if (!ta.hash.empty() && ta.hash == tb.hash) {
        t.identical = true;
        if (Shape(ta.shape).numel() == 0) t.diff.state = State::Mistrusted, t.diff.reason = ta.role + ": no elements";
      } else {
        if (inputs.empty() && ((la.op == "conv2d" && !settled) || la.op == "nms")) {
          for (const DumpTensorInfo& i : la.inputs) inputs.push_back(a_.load(i));
        }
        const Tensor x = a_.load(ta), y = b_.load(tb);
        t.diff = judge_output(la.params, inputs, x, y, tolerance(la, k, x.dtype(), inputs));
        // A keep list that differs but PASSED had every difference explained.
        if (la.op == "nms" && t.diff.state == State::Passed && t.diff.bad > 0) r.explained = true;
        if (!t.diff.reason.empty()) t.diff.reason = ta.role + ": " + t.diff.reason;
      }
      if (t.diff.structural) r.structural = true;
      r.outputs.push_back(std::move(t));
    }
    for (const TensorReport& t : r.outputs) {
      if (t.diff.state == State::Failed && r.state != State::Failed) r.state = State::Failed, r.reason = t.diff.reason;
    }
    if (r.state == State::Passed) {
      for (const TensorReport& t : r.outputs) {
        if (t.diff.state == State::Mistrusted) r.state = State::Mistrusted, r.reason = t.diff.reason;
        if (r.explained && r.reason.empty()) r.reason = t.diff.reason;
      }
    }
    if (r.state == State::Failed && !r.structural && !r.inputs_identical && !settled) local_check(la, lb, r);
    // Remember what each output did, for the inputs of later layers that name it as source.
    for (const TensorReport& t : r.outputs) {
      output_agrees_[la.name + ":" + t.role] = t.diff.state != State::Failed && !r.explained;
    }
    return r;
  }

  // B's outputs against the reference backend run on B's own inputs.
  void local_check(const DumpLayer& la, const DumpLayer& lb, LayerReport& r) const {
    const Backend& ref = backend("ref");
    if (!ref.supports(la.op)) return;
    std::vector<Tensor> in;
    for (const DumpTensorInfo& t : lb.inputs) in.push_back(b_.load(t));
    std::vector<Tensor> expected;
    try {
      expected = ref.run(lb.params, in);
    } catch (const Error&) {
      return;  // B's inputs are not valid for the op (an index out of range): no local verdict
    }
    r.local_checked = true;
    r.local_ok = expected.size() == lb.outputs.size();
    for (size_t k = 0; r.local_ok && k < expected.size(); ++k) {
      const Tensor actual = b_.load(lb.outputs[k]);
      r.local_ok = judge_output(la.params, in, expected[k], actual, tolerance(la, k, actual.dtype(), in)).state != State::Failed;
    }
  }

  LayerReport missing(const DumpLayer& l, const char* side) {
    LayerReport r = report_for(l);
    r.inputs_agree = false;
    r.inputs_reason = std::string("the layer is missing in ") + side;
    return structural(r, std::string("missing in ") + side);
  }

 private:
  static LayerReport structural(LayerReport& r, const std::string& why) {
    r.state = State::Failed;
    r.structural = true;
    r.reason = why;
    return r;
  }

  Tolerance tolerance(const DumpLayer& l, size_t k, DType dt, const std::vector<Tensor>& inputs) const {
    // conv2d's bound needs its inputs; without them (a settled, propagated layer) the defaults.
    const bool per_op = (l.op == "conv2d" && !inputs.empty()) || l.op == "detect_decode";
    Tolerance t = per_op ? tolerance_for(l.params, k, dt, inputs) : default_tolerance(dt);
    if (!is_floating(dt)) return t;
    if (o_.tolerance) t.atol = o_.tolerance->atol, t.rtol = o_.tolerance->rtol;
    for (const auto& [re, tol] : o_.per_layer) {
      if (std::regex_search(l.name, re) || std::regex_match(l.op, re)) t.atol = tol.atol, t.rtol = tol.rtol;
    }
    return t;
  }

  void compare_inputs(const DumpLayer& la, const DumpLayer& lb, LayerReport& r) {
    for (const DumpTensorInfo& ta : la.inputs) {
      const DumpTensorInfo* tb = nullptr;
      for (const DumpTensorInfo& x : lb.inputs) tb = x.role == ta.role ? &x : tb;
      std::string why;
      if (!tb) {
        why = "input " + ta.role + " missing in B";
      } else if (ta.dtype != tb->dtype || ta.shape != tb->shape) {
        why = "input " + ta.role + " differs in dtype or shape";
      } else if (ta.hash.empty() || ta.hash != tb->hash) {
        r.inputs_identical = false;
        const auto known = ta.source.empty() ? output_agrees_.end() : output_agrees_.find(ta.source);
        bool agree;
        if (known != output_agrees_.end() && ta.source == tb->source) {
          agree = known->second;
        } else {
          const Tensor x = a_.load(ta), y = b_.load(*tb);
          agree = compare_tensors(x, y, default_tolerance(x.dtype())).state != State::Failed;
        }
        if (!agree) why = "input " + ta.role + (ta.source.empty() ? "" : " (from " + ta.source + ")") + " differs";
      }
      if (!why.empty()) r.inputs_identical = false;
      if (!why.empty() && r.inputs_agree) r.inputs_agree = false, r.inputs_reason = why;
    }
  }

  const Dump &a_, &b_;
  const CompareOptions& o_;
  std::map<std::string, bool> output_agrees_;
};

}  // namespace

CompareResult compare_dumps(const Dump& a, const Dump& b, const CompareOptions& o) {
  Comparer c(a, b, o);
  std::map<std::string, const DumpLayer*> in_b;
  for (const DumpLayer& l : b.layers) in_b[l.name] = &l;
  CompareResult res;
  auto wanted = [&](const std::string& name) { return !o.layers || std::regex_search(name, *o.layers); };
  // Every layer is compared (later inputs need its verdict); the filter only hides rows. Bisect
  // runs along: the origin is the first divergent layer whose inputs agree.
  std::string first_origin;
  auto judge = [&](LayerReport r) {
    if (r.diverges() && r.inputs_agree) {
      r.origin = true;
      if (first_origin.empty()) {
        first_origin = r.name;
        if (wanted(r.name)) res.origin = int64_t(res.layers.size());
      } else if (wanted(r.name)) {
        res.other_origins.push_back(int64_t(res.layers.size()));
      }
    } else if (r.state == State::Failed && !first_origin.empty()) {
      r.propagated_from = first_origin;
    } else if (r.state == State::Failed && r.local_checked && r.local_ok) {
      r.state = State::Passed;
      r.reason = "differs from A as far as its inputs do (B's output is the reference's on B's inputs): " + r.reason;
    }
    if (wanted(r.name)) res.layers.push_back(std::move(r));
  };
  std::map<std::string, bool> seen;
  for (const DumpLayer& la : a.layers) {
    seen[la.name] = true;
    const auto it = in_b.find(la.name);
    judge(it == in_b.end() ? c.missing(la, "B") : c.layer(la, *it->second, !first_origin.empty()));
  }
  for (const DumpLayer& lb : b.layers) {
    if (!seen.count(lb.name)) judge(c.missing(lb, "A"));
  }
  for (const LayerReport& l : res.layers) {
    res.structural += l.structural;
    res.structural_origins += l.structural && l.propagated_from.empty();
    res.failed += l.state == State::Failed;
    res.passed += l.state == State::Passed;
    res.mistrusted += l.state == State::Mistrusted;
  }
  return res;
}

}  // namespace parity
