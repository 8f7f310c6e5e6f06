#include "compare/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "compare/report_rows.h"
#include "core/atomic_file.h"
#include "kernels/op_line.h"

namespace parity {

namespace {

std::string g3(double v) { return fmt::format("{:.3g}", v); }

std::string nd_text(const std::vector<int64_t>& idx) {
  if (idx.empty()) return "-";
  std::string t = "[";
  for (size_t d = 0; d < idx.size(); ++d) t += (d ? ", " : "") + std::to_string(idx[d]);
  return t + "]";
}

std::string state_text(const LayerReport& l) { return std::string(state_name(l.state)) + (l.origin ? "*" : ""); }

}  // namespace

ReportRow report_row(const LayerReport& l, const TensorDiff* w, const PrecisionStats* st, const std::string& name) {
  ReportRow r;
  r.bits = st && st->samples > 0 ? st->cell() : "-";
  r.state = state_text(l);
  r.name = name;
  if (w && !w->structural) {  // outputs of other shapes have no element-wise metrics
    r.max_abs = g3(w->max_abs), r.mean_abs = g3(w->mean_abs), r.max_rel = g3(w->max_rel), r.cosine = fmt::format("{:.9f}", w->cosine);
    r.ulp = std::to_string(w->max_ulp);
    r.pct = w->count ? fmt::format("{:.3g}", 100.0 * double(w->bad) / double(w->count)) : "0";
    r.worst = nd_text(w->worst_nd);
  } else {
    r.max_abs = r.mean_abs = r.max_rel = r.cosine = r.ulp = r.pct = r.worst = "-";
  }
  r.note = l.note();
  return r;
}

ReportRow report_row(const LayerReport& l) { return report_row(l, l.worst(), l.verdict.precision_stats(), l.name); }

std::vector<std::string> judged_how(const CompareResult& r, const ReportHeader& h) {
  std::vector<std::string> lines = {"judge " + h.judge + ", precision " + h.precision};
  for (const LayerReport& l : r.layers) {
    if (!l.verdict.widened.empty()) {
      lines.push_back("dtypes differ (first at " + l.name + "): " + l.verdict.widened);
      break;
    }
  }
  return lines;
}

namespace {

// JSON numbers cannot be NaN or infinite: those go as strings ("nan", "inf").
nlohmann::json number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(shortest_double(v)); }

// A against B, element-wise: only a trigger for the local checks, so it is not a state and is
// never written as one (the layer's state is the verdict).
const char* elementwise_text(const OutputVerdict& t) {
  if (t.identical) return "identical";
  return t.diff.state == State::Failed ? "beyond tolerance" : "within tolerance";
}

nlohmann::json precision_json(const PrecisionStats& p) {
  if (p.samples == 0) return nullptr;
  return {{"samples", p.samples}, {"exact", p.exact}, {"effective_bits", p.exact ? nlohmann::json(nullptr) : number(p.bits)},
          {"looks_like", p.looks_like()}, {"statistical_test", p.tested}, {"rms_ratio", number(p.rms_ratio)}, {"failed", p.failed}};
}

nlohmann::json diff_json(const OutputVerdict& t) {
  const TensorDiff& d = t.diff;
  return {{"role", t.role}, {"identical", t.identical}, {"elementwise", elementwise_text(t)}, {"reason", d.reason},
          {"count", d.count}, {"max_abs", number(d.max_abs)}, {"mean_abs", number(d.mean_abs)}, {"max_rel", number(d.max_rel)},
          {"rmse", number(d.rmse)}, {"cosine", number(d.cosine)}, {"max_ulp", d.max_ulp}, {"out_of_tolerance", d.bad},
          {"nonfinite_mismatches", d.nonfinite_mismatches}, {"worst_index", d.worst_nd}, {"worst_a", number(d.worst_a)},
          {"worst_b", number(d.worst_b)}, {"tolerance_at_worst", number(d.worst_allowed)}, {"precision", precision_json(t.precision)},
          {"precision_of", t.precision_of}};
}

nlohmann::json side_json(const SideCheck& c) {
  return {{"ran", c.ran}, {"ok", c.ok}, {"precision", c.precision}, {"note", c.note}};
}

}  // namespace

std::string summary_line(const CompareResult& r) {
  std::string s = fmt::format("{} layers: {} passed ({} explained by their inputs), {} failed ({} structural), {} mistrusted, {} unchecked",
                              r.layers.size(), r.passed, r.explained, r.failed, r.structural, r.mistrusted, r.unchecked);
  if (r.origin >= 0) {
    int64_t propagated = 0;
    for (const LayerReport& l : r.layers) propagated += !l.propagated_from.empty();
    s += fmt::format("; origin {} ({} later layers propagated", r.layers[size_t(r.origin)].name, propagated);
    s += r.other_origins.empty() ? ")" : fmt::format(", {} more origins)", r.other_origins.size());
  }
  return s;
}

void write_table(std::ostream& out, const CompareResult& r, const ReportHeader& h, bool colour, bool all_tensors) {
  out << "A: " << h.a << "\nB: " << h.b << "\n";
  for (const std::string& s : judged_how(r, h)) out << s << "\n";
  for (const std::string& p : r.provenance) out << "provenance differs: " << p << "\n";
  std::vector<ReportRow> rows = {{"state", "max abs", "mean abs", "max rel", "cosine", "ULP", "bits", "% out", "worst", "layer", ""}};
  std::vector<const LayerReport*> layer_of = {nullptr};
  for (const LayerReport& l : r.layers) {
    rows.push_back(report_row(l));
    layer_of.push_back(&l);
    if (all_tensors && l.verdict.outputs.size() > 1) {
      for (const OutputVerdict& t : l.verdict.outputs) {
        ReportRow tr = report_row(l, &t.diff, &t.precision, "  " + l.name + ":" + t.role);
        tr.note = t.diff.reason;
        rows.push_back(tr);
        layer_of.push_back(nullptr);
      }
    }
  }
  size_t w[10] = {};
  for (const ReportRow& x : rows) {
    const std::string* f[10] = {&x.state, &x.max_abs, &x.mean_abs, &x.max_rel, &x.cosine, &x.ulp, &x.bits, &x.pct, &x.worst, &x.name};
    for (int k = 0; k < 10; ++k) w[k] = std::max(w[k], f[k]->size());
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const ReportRow& x = rows[i];
    std::string state = fmt::format("{:<{}}", x.state, w[0]);
    if (colour && i > 0) {
      const char* c = x.state.rfind("PASSED", 0) == 0 ? "\033[32m" : x.state.rfind("FAILED", 0) == 0 ? "\033[31m" : "\033[33m";
      state = c + state + "\033[0m";
    }
    out << state << "  "
        << fmt::format("{:>{}}  {:>{}}  {:>{}}  {:>{}}  {:>{}}  {:>{}}  {:>{}}  {:>{}}  {:<{}}", x.max_abs, w[1], x.mean_abs, w[2],
                       x.max_rel, w[3], x.cosine, w[4], x.ulp, w[5], x.bits, w[6], x.pct, w[7], x.worst, w[8], x.name, w[9]);
    if (!x.note.empty()) out << "  " << x.note;
    out << "\n";
  }
  out << summary_line(r) << "\n";
}

void write_json(const std::string& path, const CompareResult& r, const ReportHeader& h) {
  nlohmann::json layers = nlohmann::json::array();
  for (const LayerReport& l : r.layers) {
    nlohmann::json outs = nlohmann::json::array();
    for (const OutputVerdict& t : l.verdict.outputs) outs.push_back(diff_json(t));
    layers.push_back({{"index", l.index}, {"occurrence", l.occurrence}, {"name", l.name}, {"op", l.op}, {"params", l.params},
                      {"params_b", l.params_b}, {"state", state_name(l.state)}, {"structural", l.structural},
                      {"explained", l.explained}, {"origin", l.origin}, {"defective", sides_name(l.defective)},
                      {"propagated_from", l.propagated_from}, {"reason", l.reason}, {"note", l.note()},
                      {"effective_bits", l.verdict.precision_stats() && !l.verdict.precision_stats()->exact
                                             ? number(l.verdict.precision_stats()->bits) : nlohmann::json(nullptr)},
                      {"widened", l.verdict.widened},
                      {"local_check", {{"a", side_json(l.verdict.a)}, {"b", side_json(l.verdict.b)}}}, {"outputs", outs}});
  }
  nlohmann::json origins = nlohmann::json::array();
  if (r.origin >= 0) origins.push_back(r.layers[size_t(r.origin)].name);
  for (int64_t i : r.other_origins) origins.push_back(r.layers[size_t(i)].name);
  const nlohmann::json j = {{"a", h.a}, {"b", h.b}, {"judge", h.judge}, {"precision", h.precision}, {"judged", judged_how(r, h)},
                            {"provenance", r.provenance}, {"summary", summary_line(r)},
                            {"passed", r.passed}, {"explained", r.explained}, {"failed", r.failed}, {"structural", r.structural},
                            {"mistrusted", r.mistrusted}, {"unchecked", r.unchecked},
                            {"origin", r.origin >= 0 ? nlohmann::json(r.layers[size_t(r.origin)].name) : nlohmann::json(nullptr)},
                            {"origins", origins}, {"layers", layers}};
  write_file_atomically(path, j.dump(2) + "\n");
}

namespace {
// A CSV field: quoted when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}
}  // namespace

void write_csv(const std::string& path, const CompareResult& r) {
  // The effective bits of each output: "exact" when no sampled element differs, empty when the
  // output is not float or the shapes differ.
  std::string s =
      "index,layer,occurrence,op,output,state,explained,origin,defective,propagated_from,elementwise,max_abs,mean_abs,max_rel,"
      "rmse,cosine,max_ulp,effective_bits,out_of_tolerance,count,worst_index,note\n";
  for (const LayerReport& l : r.layers) {
    std::vector<const OutputVerdict*> outs;
    for (const OutputVerdict& t : l.verdict.outputs) outs.push_back(&t);
    if (outs.empty()) outs.push_back(nullptr);  // a layer judged without outputs (missing, another call) still has its row
    for (const OutputVerdict* t : outs) {
      const TensorDiff d = t ? t->diff : TensorDiff{};
      const std::string bits = t && t->precision.samples > 0 ? (t->precision.exact ? "exact" : fmt::format("{:.2f}", t->precision.bits)) : "";
      s += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{},{},{},{},{},{}\n", l.index,
                       csv_field(l.name), l.occurrence, l.op, t ? t->role : "", state_name(l.state), l.explained ? 1 : 0,
                       l.origin ? 1 : 0, sides_name(l.defective), csv_field(l.propagated_from),
                       t ? elementwise_text(*t) : "", d.max_abs, d.mean_abs, d.max_rel, d.rmse,
                       d.cosine, d.max_ulp, bits, d.bad, d.count, csv_field(nd_text(d.worst_nd)), csv_field(l.note()));
    }
  }
  write_file_atomically(path, s);
}

}  // namespace parity
