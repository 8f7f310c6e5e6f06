#include "compare/judge.h"

#include <array>
#include <fstream>
#include <nlohmann/json.hpp>

#include "compare/order_checks.h"
#include "compare/tolerance.h"
#include "core/error.h"
#include "kernels/argsort/argsort.h"
#include "kernels/backend.h"
#include "kernels/nms/nms.h"

namespace parity {

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

Tolerance layer_tolerance(const JudgeOptions& o, const std::string& name, const std::string& line, size_t k, DType dtype,
                          const std::vector<Tensor>& inputs) {
  const std::string op = op_name_of(line);
  Tolerance t;
  if (op == "conv2d" && inputs.empty()) {
    t = default_tolerance(dtype);
  } else {
    // The per-element bound reads the inputs by the call's shapes: they must be the call's.
    if (op == "conv2d") check_inputs(op, op_inputs(line), inputs);
    t = tolerance_for(line, k, dtype, inputs);
  }
  if (!is_floating(dtype)) return t;
  if (o.tolerance) t.atol = o.tolerance->atol, t.rtol = o.tolerance->rtol;
  for (const auto& [re, tol] : o.per_layer) {
    if (std::regex_search(name, re) || std::regex_match(op, re)) t.atol = tol.atol, t.rtol = tol.rtol;
  }
  return t;
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

TensorDiff judge_output(const std::string& line, size_t k, const std::vector<Tensor>& inputs, const Tensor& expected,
                        const Tensor& actual, const Tolerance& tol) {
  TensorDiff d = compare_tensors(expected, actual, tol);
  if (d.state != State::Failed || k != 0 || actual.dtype() != DType::Int64 || actual.shape().rank() != 1) return d;
  const std::string op = op_name_of(line);
  if (op == "nms") {
    const NmsParams p = NmsParams::parse(line);
    const NmsCheck c = check_nms_keep(nms_offset_boxes(p, inputs), inputs[1], p.iou, actual);
    return accept_if(d, c.valid,
                     "a valid NMS of its inputs: " + std::to_string(c.ties) + " decisions on score ties, " + std::to_string(c.near_threshold) +
                         " IoUs within 1e-5 of the threshold",
                     "keep list is not a valid NMS of its inputs: " + c.violation);
  }
  if (op == "argsort") {
    const ArgsortParams p = ArgsortParams::parse(line);
    const OrderCheck c = check_argsort(inputs[0], p.descending, actual);
    return accept_if(d, c.valid, "a permutation that sorts its input, " + std::to_string(c.ties) + " adjacent equal keys in any order",
                     "not an argsort of its input: " + c.violation);
  }
  return d;
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
  for (const auto& [from, to] : {std::pair<std::string, std::string>{": A ", ": judge "}, {", B ", std::string(", ") + side + " "}}) {
    for (size_t at = reason.find(from); at != std::string::npos; at = reason.find(from, at + to.size())) reason.replace(at, from.size(), to);
  }
  return reason;
}

class LayerJudge {
 public:
  LayerJudge(const std::string& name, const LayerSide& a, const LayerSide& b, bool same_inputs, const JudgeOptions& o)
      : name_(name), a_(a), b_(b), same_inputs_(same_inputs), o_(o) {}

  LayerVerdict run() {
    compare_outputs();
    if (!v_.differs) {
      for (const OutputVerdict& t : v_.outputs) {
        if (t.diff.state == State::Mistrusted && v_.state == State::Passed) v_.state = State::Mistrusted, v_.reason = t.role + ": " + t.diff.reason;
      }
      return v_;
    }
    std::optional<std::vector<Tensor>> judged_a;
    v_.a = local_check(a_, "A", bool(a_.inputs), inputs_of_a(), judged_a);
    std::optional<std::vector<Tensor>> judged_b;
    if (same_inputs_ && a_.inputs) {
      // The same call on the same bytes: the judge (deterministic) gives the same answer.
      if (a_.line == b_.line) judged_b = judged_a;
      v_.b = local_check(b_, "B", true, inputs_of_a(), judged_b);
    } else {
      v_.b = local_check(b_, "B", bool(b_.inputs), b_.inputs ? b_.inputs() : std::vector<Tensor>{}, judged_b);
    }
    settle();
    return v_;
  }

 private:
  const std::vector<Tensor>& inputs_of_a() {
    if (!a_inputs_ && a_.inputs) a_inputs_ = a_.inputs();
    if (!a_inputs_) a_inputs_.emplace();
    return *a_inputs_;
  }

  // A against B, output by output.
  void compare_outputs() {
    if (a_.outputs.size() != b_.outputs.size()) {
      v_.differs = true;
      differences_ = "output counts differ: A " + std::to_string(a_.outputs.size()) + ", B " + std::to_string(b_.outputs.size());
    }
    const std::string op = op_name_of(a_.line);
    for (size_t k = 0; k < std::min(a_.outputs.size(), b_.outputs.size()); ++k) {
      OutputVerdict t;
      t.role = k < a_.roles.size() ? a_.roles[k] : "out" + std::to_string(k);
      const Tensor &x = a_.outputs[k], &y = b_.outputs[k];
      if (k < a_.hashes.size() && k < b_.hashes.size() && a_.hashes[k] == b_.hashes[k] && x.dtype() == y.dtype() &&
          x.shape() == y.shape()) {
        t.identical = true;
        t.diff.count = x.numel();
        if (const std::string why = mistrust_reason(x); !why.empty()) t.diff.state = State::Mistrusted, t.diff.reason = why;
      } else {
        // conv2d's bound needs A's inputs; other ops' tolerances do not.
        static const std::vector<Tensor> none;
        const bool need_inputs = op == "conv2d" && x.dtype() == y.dtype() && x.shape() == y.shape();
        t.diff = compare_tensors(x, y, layer_tolerance(o_, name_, a_.line, k, x.dtype(), need_inputs ? inputs_of_a() : none));
        if (t.diff.state == State::Failed) {
          v_.differs = true;
          if (differences_.empty()) differences_ = t.role + ": " + t.diff.reason;
        }
      }
      v_.outputs.push_back(std::move(t));
    }
  }

  SideCheck local_check(const LayerSide& s, const char* s_label, bool recorded, const std::vector<Tensor>& inputs,
                        std::optional<std::vector<Tensor>>& judged) const {
    SideCheck c;
    const Backend& judge = backend(o_.judge);
    const std::string op = op_name_of(s.line);
    if (!recorded) {
      c.note = "its inputs were not recorded";
      return c;
    }
    if (const std::string why = judge.unavailable_reason(); !why.empty()) {
      c.note = "the judge (" + judge.name() + ") cannot run here: " + why;
      return c;
    }
    if (!judge.supports(op)) {
      c.note = "the judge (" + judge.name() + ") has no " + op;
      return c;
    }
    if (s.judged) judged = s.judged;
    if (!judged) {
      try {
        judged = judge.run(s.line, inputs);
      } catch (const Error& e) {
        c.note = "the judge (" + judge.name() + ") refuses these inputs: " + e.what();
        return c;
      }
    }
    c.ran = true;
    c.ok = true;
    if (judged->size() != s.outputs.size()) {
      c.ok = false, c.structural = true;
      c.note = std::to_string(s.outputs.size()) + " outputs where the call has " + std::to_string(judged->size());
      return c;
    }
    for (size_t k = 0; k < judged->size() && c.ok; ++k) {
      const Tensor& expected = (*judged)[k];
      const Tolerance tol = layer_tolerance(o_, name_, s.line, k, expected.dtype(), inputs);
      const TensorDiff d = judge_output(s.line, k, inputs, expected, s.outputs[k], tol);
      const std::string role = k < s.roles.size() ? s.roles[k] : "out" + std::to_string(k);
      if (d.state == State::Failed) {
        c.ok = false, c.structural = d.structural;
        c.note = role + ": " + judge_labels(d.reason, s_label);
      } else if (d.state == State::Passed && !d.reason.empty()) {
        c.note += (c.note.empty() ? "" : "; ") + role + ": " + d.reason;  // another correct answer: say which freedom it took
      }
    }
    return c;
  }

  std::array<std::pair<const char*, const SideCheck*>, 2> sides() const { return {{{"A", &v_.a}, {"B", &v_.b}}}; }

  void settle() {
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
      v_.reason = "explained by its inputs (each side is the judge's on its own inputs): " + differences_;
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
  LayerVerdict v_;
  std::string differences_;  // the first difference A against B, one line
  std::optional<std::vector<Tensor>> a_inputs_;
};

}  // namespace

LayerVerdict judge_layer(const std::string& name, const LayerSide& a, const LayerSide& b, bool same_inputs,
                         const JudgeOptions& o) {
  return LayerJudge(name, a, b, same_inputs, o).run();
}

}  // namespace parity
