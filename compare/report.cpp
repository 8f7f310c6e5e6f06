#include "compare/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
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

std::string state_text(const LayerReport& l) { return l.verdict_word() + (l.origin() ? "*" : ""); }

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
  lines.insert(lines.end(), r.expected.begin(), r.expected.end());
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
          {"worst_b", number(d.worst_b)}, {"tolerance_at_worst", number(d.worst_allowed)}, {"precision", precision_json(t.stats)},
          {"precision_of", t.stats_side}};
}

nlohmann::json side_json(const SideCheck& c) {
  return {{"ran", c.ran}, {"ok", c.ok}, {"precision", c.statistical}, {"note", c.note}};
}

}  // namespace

std::string defective_text(const LayerReport& l) {
  if (l.defective != Sides::None) return sides_name(l.defective);
  return l.cause == OriginCause::Wiring ? "neither kernel: the model code feeds this layer otherwise on the two runs (another layer, view or copy)"
                   : "neither kernel: the data the two runs were given";
}

std::string summary_line(const CompareResult& r) {
  std::string s = fmt::format(
      "{} layers: {} passed ({} matching the judge on their own inputs), {} failed ({} structural), {} propagated, {} mistrusted, "
      "{} unchecked",
      r.layers.size(), r.passed, r.explained, r.failed, r.structural, r.propagated, r.mistrusted, r.unchecked);
  if (r.origin >= 0) {
    s += "; origin " + r.layers[size_t(r.origin)].name;
    if (!r.other_origins.empty()) s += fmt::format(" ({} more origins)", r.other_origins.size());
  }
  return s;
}

double error_over_tolerance(const LayerReport& l) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  double worst = 0;
  for (const OutputVerdict& t : l.verdict.outputs) {
    const TensorDiff& d = t.diff;
    double e = 0;
    if (t.identical || (d.bad == 0 && !d.structural && d.max_abs == 0)) {
      e = 0;
    } else if (d.structural) {
      e = inf;
    } else if (d.worst_allowed > 0) {  // a float output: the worst element against its own tolerance
      e = std::fabs(d.worst_a - d.worst_b) / d.worst_allowed;
      if (!std::isfinite(e)) e = inf;
    } else if (d.bad > 0) {  // integers, bools, NaN/Inf positions, or an exact float tolerance
      e = l.passed() ? 0 : inf;
    }
    worst = std::max(worst, e);
  }
  // A layer judged without outputs (only one side has it, another call) is as far off as it gets.
  if (l.verdict.outputs.empty() && !l.passed()) worst = inf;
  return worst;
}

namespace {

// Just beyond 1 gets enough digits to show it is beyond: "1" would read as within tolerance.
std::string ratio_text(double e) {
  if (std::isinf(e)) return "inf";
  if (e > 1 && e < 1.01) return fmt::format("{:.5f}", e);
  return e == 0 ? "0" : g3(e);
}

// The layers the view shows, in the order it shows them.
std::vector<const LayerReport*> shown_layers(const CompareResult& r, const TableView& v) {
  std::vector<const LayerReport*> shown;
  for (const LayerReport& l : r.layers) {
    if (!v.failed_only || !l.passed()) shown.push_back(&l);
  }
  if (v.top > 0) {
    std::vector<std::pair<double, const LayerReport*>> ranked;
    for (const LayerReport* l : shown) ranked.push_back({error_over_tolerance(*l), l});
    // Stable: among equal ratios (every infinite one) the earlier layer comes first.
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    shown.clear();
    for (size_t i = 0; i < ranked.size() && i < size_t(v.top); ++i) shown.push_back(ranked[i].second);
  }
  // Whatever --top or --failed picks, the origin's row comes first: it is the answer. (The
  // whole table keeps execution order, the origin among its rows.)
  if (r.origin >= 0 && (v.top > 0 || v.failed_only)) {
    const LayerReport* origin = &r.layers[size_t(r.origin)];
    shown.erase(std::remove(shown.begin(), shown.end(), origin), shown.end());
    if (v.top > 0 && int64_t(shown.size()) >= v.top) shown.pop_back();
    shown.insert(shown.begin(), origin);
  }
  return shown;
}

// `text` broken at spaces into lines of at most `width` characters (a longer word stays whole).
std::vector<std::string> wrapped(const std::string& text, size_t width) {
  std::vector<std::string> lines(1);
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find(' ', i);
    if (j == std::string::npos) j = text.size();
    const std::string word = text.substr(i, j - i);
    if (!lines.back().empty() && lines.back().size() + 1 + word.size() > width) lines.emplace_back();
    lines.back() += (lines.back().empty() ? "" : " ") + word;
    i = j + 1;
  }
  return lines;
}

// The table's rows, columns aligned: state and layer read left to right, the figures line up on
// the right; each row's note after it, or on lines of its own under it where the row would pass
// the terminal's width.
void write_aligned(std::ostream& out, const std::vector<std::vector<std::string>>& rows, const std::vector<std::string>& notes,
                   const TableView& v) {
  const size_t columns = rows[0].size();
  std::vector<size_t> w(columns, 0);
  for (const auto& row : rows) {
    for (size_t k = 0; k < columns; ++k) w[k] = std::max(w[k], row[k].size());
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    std::string line;
    for (size_t k = 0; k < columns; ++k) {
      const bool left = k == 0 || k + 1 == columns;
      std::string cell = left ? fmt::format("{:<{}}", row[k], w[k]) : fmt::format("{:>{}}", row[k], w[k]);
      if (k == 0 && v.colour && i > 0) {
        const bool red = row[0].rfind("FAILED", 0) == 0 || row[0].rfind("PROPAGATED", 0) == 0;
        const char* c = row[0].rfind("PASSED", 0) == 0 ? "\033[32m" : red ? "\033[31m" : "\033[33m";
        cell = c + cell + "\033[0m";
      }
      line += (k ? "  " : "") + cell;
    }
    size_t visible = 2 * (columns - 1);  // the row's width on screen, colour codes aside
    for (size_t k = 0; k < columns; ++k) visible += w[k];
    const std::string& note = notes[i];
    if (note.empty() || (v.width > 0 && visible + 2 + note.size() > size_t(v.width))) {
      while (!line.empty() && line.back() == ' ') line.pop_back();  // the layer column's padding
    }
    if (note.empty()) {
      out << line << "\n";
    } else if (v.width <= 0 || visible + 2 + note.size() <= size_t(v.width)) {
      out << line << "  " << note << "\n";
    } else {
      // The note on lines of its own under the row, indented, so the columns stay readable.
      out << line << "\n";
      for (const std::string& part : wrapped(note, size_t(std::max(v.width - 6, 40)))) out << "      " << part << "\n";
    }
  }
}

}  // namespace

void write_table(std::ostream& out, const CompareResult& r, const ReportHeader& h, const TableView& v) {
  out << "A: " << h.a << "\nB: " << h.b << "\n";
  for (const std::string& s : judged_how(r, h)) out << s << "\n";
  for (const std::string& p : r.provenance) out << "provenance differs: " << p << "\n";
  // --top adds the ranking's own figure as a column after "% out".
  std::vector<std::vector<std::string>> rows = {{"state", "max abs", "mean abs", "max rel", "cosine", "ULP", "bits", "% out", "worst", "layer"}};
  if (v.top > 0) rows[0].insert(rows[0].begin() + 8, "err/tol");
  std::vector<std::string> notes = {""};
  auto add = [&](const ReportRow& x, const LayerReport& l, bool layer_row) {
    std::vector<std::string> cells = {x.state, x.max_abs, x.mean_abs, x.max_rel, x.cosine, x.ulp, x.bits, x.pct, x.worst, x.name};
    if (v.top > 0) cells.insert(cells.begin() + 8, layer_row ? ratio_text(error_over_tolerance(l)) : "");
    rows.push_back(cells);
    notes.push_back(x.note);
  };
  for (const LayerReport* l : shown_layers(r, v)) {
    add(report_row(*l), *l, true);
    if (v.all_tensors && l->verdict.outputs.size() > 1) {
      for (const OutputVerdict& t : l->verdict.outputs) {
        ReportRow tr = report_row(*l, &t.diff, &t.stats, "  " + l->name + ":" + t.role);
        tr.note = t.diff.reason;
        add(tr, *l, false);
      }
    }
  }
  write_aligned(out, rows, notes, v);
  bool propagated_shown = false;
  for (const LayerReport* l : shown_layers(r, v)) propagated_shown |= l->propagated();
  if (propagated_shown) {
    out << "PROPAGATED: beyond tolerance only because an origin upstream made its inputs differ; each side matches the judge on "
           "its own inputs (or cannot be checked)\n";
  }
  out << summary_line(r) << "\n";
}

void write_json(const std::string& path, const CompareResult& r, const ReportHeader& h) {
  nlohmann::json layers = nlohmann::json::array();
  for (const LayerReport& l : r.layers) {
    nlohmann::json outs = nlohmann::json::array();
    for (const OutputVerdict& t : l.verdict.outputs) outs.push_back(diff_json(t));
    layers.push_back({{"index", l.index}, {"occurrence", l.occurrence}, {"name", l.name}, {"op", l.op}, {"params", l.line},
                      {"params_b", l.line_b}, {"state", l.verdict_word()}, {"structural", l.structural()},
                      {"explained", l.explained()}, {"origin", l.origin()}, {"defective", sides_name(l.defective)},
                      {"defective_text", l.origin() ? defective_text(l) : std::string()},
                      {"propagated_from", l.propagated_from}, {"reason", l.reason}, {"note", l.note()},
                      {"effective_bits", l.verdict.precision_stats() && !l.verdict.precision_stats()->exact
                                             ? number(l.verdict.precision_stats()->bits) : nlohmann::json(nullptr)},
                      {"widened", l.verdict.widened}, {"error_over_tolerance", number(error_over_tolerance(l))},
                      {"local_check", {{"a", side_json(l.verdict.a)}, {"b", side_json(l.verdict.b)}}}, {"outputs", outs}});
  }
  nlohmann::json origins = nlohmann::json::array();
  if (r.origin >= 0) origins.push_back(r.layers[size_t(r.origin)].name);
  for (int64_t i : r.other_origins) origins.push_back(r.layers[size_t(i)].name);
  const nlohmann::json j = {{"a", h.a}, {"b", h.b}, {"judge", h.judge}, {"precision", h.precision}, {"judged", judged_how(r, h)},
                            {"provenance", r.provenance}, {"summary", summary_line(r)},
                            {"passed", r.passed}, {"explained", r.explained}, {"failed", r.failed}, {"structural", r.structural},
                            {"propagated", r.propagated},
                            {"mistrusted", r.mistrusted}, {"unchecked", r.unchecked},
                            {"origin", r.origin >= 0 ? nlohmann::json(r.layers[size_t(r.origin)].name) : nlohmann::json(nullptr)},
                            {"origins", origins}, {"layers", layers}};
  write_file_atomically(path, j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
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
      const std::string bits = t && t->stats.samples > 0 ? (t->stats.exact ? "exact" : fmt::format("{:.2f}", t->stats.bits)) : "";
      s += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{},{},{},{},{},{}\n", l.index,
                       csv_field(l.name), l.occurrence, l.op, t ? t->role : "", l.verdict_word(), l.explained() ? 1 : 0,
                       l.origin() ? 1 : 0, sides_name(l.defective), csv_field(l.propagated_from),
                       t ? elementwise_text(*t) : "", d.max_abs, d.mean_abs, d.max_rel, d.rmse,
                       d.cosine, d.max_ulp, bits, d.bad, d.count, csv_field(nd_text(d.worst_nd)), csv_field(l.note()));
    }
  }
  write_file_atomically(path, s);
}

}  // namespace parity
