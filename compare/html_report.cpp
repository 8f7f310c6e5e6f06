// write_html: one self-contained page (no script, style or font fetched) with the header, a plot
// of every layer and the table. The plot is inline SVG in viewBox units, so it scales with the
// window; every layer is one clickable column that jumps to its table row (id "L<row>").
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "compare/report.h"
#include "compare/report_rows.h"
#include "core/atomic_file.h"

namespace parity {

namespace {

// Attributes are written in single quotes, so both quote characters are escaped.
std::string escape_html(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '&') o += "&amp;";
    else if (c == '"') o += "&quot;";
    else if (c == '\'') o += "&#39;";
    else o += c;
  }
  return o;
}

std::string row_id(size_t row) { return "L" + std::to_string(row); }
std::string row_link(size_t row) { return "#" + row_id(row); }

// ---------------------------------------------------------------------------------------------
// What the plot shows of each layer.

// Whether an output was compared value for value (integers and bools: indices, keep lists,
// masks) rather than under a float tolerance. The verdict does not carry dtypes, but the judge
// gives every float output of matching shape effective-precision figures (samples > 0) and no
// integer or bool output any; so an output with elements and no figures was compared exactly.
// Its max abs is then a difference of indices, not an error, and must not share the float scale.
bool compared_exactly(const OutputVerdict& t) { return !t.diff.structural && t.diff.count > 0 && t.precision.samples == 0; }

// The order LayerVerdict::worst() uses: most elements out, then the largest error.
bool worse_than(const TensorDiff& x, const TensorDiff& y) { return x.bad > y.bad || (x.bad == y.bad && x.max_abs > y.max_abs); }

struct LayerMarks {
  const OutputVerdict* float_out = nullptr;  // the worst float output
  const OutputVerdict* exact_out = nullptr;  // the worst integer or bool output
  // No element-wise figures for some output: the layer is missing on one side, the output
  // counts differ, or an output has another shape or dtype.
  bool structural = false;
};

LayerMarks marks_of(const LayerReport& l) {
  LayerMarks m;
  m.structural = l.structural || l.verdict.structural || l.verdict.outputs.empty();
  for (const OutputVerdict& t : l.verdict.outputs) {
    if (t.diff.structural) {
      m.structural = true;
      continue;
    }
    const OutputVerdict*& worst = compared_exactly(t) ? m.exact_out : m.float_out;
    if (!worst || worse_than(t.diff, worst->diff)) worst = &t;
  }
  return m;
}

double share_differing(const TensorDiff& d) { return d.count > 0 ? double(d.bad) / double(d.count) : 0.0; }

// The colour class of a layer's marks and row: the origin above its state.
const char* state_class(const LayerReport& l) {
  if (l.origin) return "s-origin";
  switch (l.state) {
    case State::Passed: return "s-passed";
    case State::Failed: return "s-failed";
    case State::Mistrusted: return "s-mistrusted";
    case State::Unchecked: return "s-unchecked";
    default: return "s-skipped";
  }
}

// ---------------------------------------------------------------------------------------------
// Module groups: runs of consecutive layers sharing a name prefix ("model.2" for
// "model.2.m.0.cv1.conv"), the x axis's labels when there are too many layers to name each.

struct LayerGroup {
  std::string name;
  size_t first = 0, last = 0;  // rows, inclusive
};

// The first `depth` dot-separated parts of a layer name.
std::string name_prefix(const std::string& name, size_t depth) {
  size_t end = std::string::npos, from = 0;
  for (size_t d = 0; d < depth; ++d) {
    end = name.find('.', from);
    if (end == std::string::npos) return name;
    from = end + 1;
  }
  return name.substr(0, end);
}

std::vector<LayerGroup> groups_at_depth(const std::vector<LayerReport>& layers, size_t depth) {
  std::vector<LayerGroup> groups;
  for (size_t i = 0; i < layers.size(); ++i) {
    const std::string key = name_prefix(layers[i].name, depth);
    if (groups.empty() || groups.back().name != key) groups.push_back({key, i, i});
    groups.back().last = i;
  }
  return groups;
}

size_t name_depth(const std::string& name) { return size_t(std::count(name.begin(), name.end(), '.')) + 1; }

// The finest grouping with at most `max_groups` groups. When that one is too coarse to tell
// modules apart (everything under "model"), the next finer one instead: the axis then leaves out
// the labels that would crowd.
std::vector<LayerGroup> module_groups(const std::vector<LayerReport>& layers, size_t max_groups) {
  size_t deepest = 1;
  for (const LayerReport& l : layers) deepest = std::max(deepest, name_depth(l.name));
  const size_t too_coarse = std::max<size_t>(max_groups / 8, 2);
  std::vector<LayerGroup> best = groups_at_depth(layers, 1);
  for (size_t depth = 2; depth <= deepest; ++depth) {
    std::vector<LayerGroup> g = groups_at_depth(layers, depth);
    if (g.size() > max_groups && best.size() >= too_coarse) break;
    best = std::move(g);
    if (best.size() > max_groups) break;
  }
  return best;
}

// ---------------------------------------------------------------------------------------------
// The plot's coordinates, in viewBox units (the page scales them to the window's width). Lanes,
// top to bottom: the legend; structural rows; float errors on a log scale; the baseline where
// float errors of exactly 0 sit; integer and bool outputs, by the share of elements differing;
// the x axis's labels.

struct PlotFrame {
  static constexpr double kWidth = 1200, kLeft = 150, kRight = 16;
  static constexpr double kLegendY = 16;
  static constexpr double kOriginLabelY = 54;
  static constexpr double kStructuralY = 70;
  static constexpr double kLogTop = 92, kLogBottom = 308;
  static constexpr double kZeroY = 332;
  // Shares of elements differing on a log scale from kExactLowShare (kExactLowY) to all of them
  // (kExactTop), so that one wrong index in thousands still stands clear of none (kExactBottom).
  static constexpr double kExactTop = 352, kExactLowY = 398, kExactBottom = 412;
  static constexpr double kExactLowShare = 1e-4;
  static constexpr double kAxisY = 424;
  static constexpr double kLabelFont = 10.5;  // x labels, rotated by kLabelAngle
  static constexpr double kLabelAngle = 55;
  static constexpr double kLabelSpacing = 15;  // the least gap between two rotated labels

  size_t layers = 1;
  double lo_decade = -9, hi_decade = -3;  // the log scale's range, powers of ten
  double label_room = 40;                 // below kAxisY

  double plot_width() const { return kWidth - kLeft - kRight; }
  double step() const { return plot_width() / double(layers); }
  double x(size_t row) const { return kLeft + (double(row) + 0.5) * step(); }
  double height() const { return kAxisY + label_room; }
  // A positive finite error on the log scale.
  double y_error(double v) const {
    const double e = std::clamp(std::log10(v), lo_decade, hi_decade);
    return kLogBottom - (e - lo_decade) / (hi_decade - lo_decade) * (kLogBottom - kLogTop);
  }
  double y_exact(double share) const {
    if (share <= 0) return kExactBottom;
    const double low = std::log10(kExactLowShare), e = std::clamp(std::log10(share), low, 0.0);
    return kExactLowY - (e - low) / -low * (kExactLowY - kExactTop);
  }
  double marker_radius() const { return std::clamp(step() * 0.35, 1.8, 4.0); }
};

// Decades spanning every positive float error and tolerance, at least two.
void fit_error_scale(const std::vector<LayerMarks>& marks, PlotFrame& f) {
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (const LayerMarks& m : marks) {
    if (!m.float_out) continue;
    for (double v : {m.float_out->diff.max_abs, m.float_out->diff.worst_allowed}) {
      if (v > 0 && std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
    }
  }
  if (hi == 0) return;  // nothing positive: the default range
  f.lo_decade = std::floor(std::log10(lo));
  f.hi_decade = std::max(std::ceil(std::log10(hi)), f.lo_decade + 2);
}

// Shortens a label from the left, where layer names repeat their enclosing modules.
std::string shortened(const std::string& s, size_t max_chars) {
  return s.size() <= max_chars ? s : "\xE2\x80\xA6" + s.substr(s.size() - (max_chars - 1));
}

constexpr size_t kMaxLabelChars = 30;
// Average advance of a character of the sans-serif label font, in units of the font size.
constexpr double kCharWidth = 0.58;

double label_room_for(const std::vector<std::string>& labels) {
  size_t longest = 0;
  for (const std::string& s : labels) longest = std::max(longest, std::min(s.size(), kMaxLabelChars));
  const double along = double(longest) * kCharWidth * PlotFrame::kLabelFont;
  return along * std::sin(PlotFrame::kLabelAngle * std::acos(-1.0) / 180.0) + 2 * PlotFrame::kLabelFont;
}

// ---------------------------------------------------------------------------------------------
// The plot's parts.

std::string text_at(double x, double y, const std::string& text, const char* anchor = "start", const char* cls = "") {
  return fmt::format("<text x='{:.1f}' y='{:.1f}' text-anchor='{}' class='{}'>{}</text>", x, y, anchor, cls, escape_html(text));
}

std::string hline(double x1, double x2, double y, const char* cls) {
  return fmt::format("<line x1='{:.1f}' x2='{:.1f}' y1='{:.1f}' y2='{:.1f}' class='{}'/>", x1, x2, y, y, cls);
}

std::string diamond_path(double x, double y, double r) {
  return fmt::format("M{:.1f},{:.1f}L{:.1f},{:.1f}L{:.1f},{:.1f}L{:.1f},{:.1f}Z", x, y - r, x + r, y, x, y + r, x - r, y);
}

std::string cross_path(double x, double y, double r) {
  return fmt::format("M{:.1f},{:.1f}L{:.1f},{:.1f}M{:.1f},{:.1f}L{:.1f},{:.1f}", x - r, y - r, x + r, y + r, x - r, y + r, x + r, y - r);
}

// Points up from the top of the log scale: an error that is infinite or NaN (NaN/Inf positions
// differ), which no finite scale holds.
std::string up_triangle_path(double x, double y, double r) {
  return fmt::format("M{:.1f},{:.1f}L{:.1f},{:.1f}L{:.1f},{:.1f}Z", x, y - r, x + r, y + r, x - r, y + r);
}

// The legend, one swatch and label after another.
std::string legend_svg() {
  struct Item {
    std::string swatch, label;
  };
  const std::vector<Item> states = {
      {"<circle r='4' class='pt s-passed'/>", "passed"},
      {"<circle r='4' class='pt s-passed explained'/>", "passed, explained by its inputs"},
      {"<circle r='4' class='pt s-failed'/>", "failed"},
      {"<circle r='5' class='pt s-origin'/>", "origin"},
      {"<circle r='4' class='pt s-mistrusted'/>", "mistrusted"},
      {"<circle r='4' class='pt s-unchecked'/>", "unchecked"},
      {"<circle r='4' class='pt s-skipped'/>", "skipped"}};
  const std::vector<Item> kinds = {
      {"<circle r='3.5' class='pt s-passed'/>", "float: max abs error, log scale (exactly 0 on the dashed line)"},
      {"<path d='M-7,0L7,0' class='tol'/>", "tolerance at the worst element"},
      {"<path d='" + diamond_path(0, 0, 4.5) + "' class='pt s-passed'/>", "int/bool: share of elements differing (log)"},
      {"<path d='" + cross_path(0, 0, 4) + "' class='pt struct s-failed'/>", "structural: missing on a side, other shape"}};
  // The legend's font is smaller on average than kCharWidth, which errs wide for the x labels.
  constexpr double kLegendCharWidth = 0.5 * 11;
  std::string s;
  auto place = [&](const std::vector<Item>& items, double y) {
    double x = 20;
    for (const Item& it : items) {
      s += fmt::format("<g transform='translate({:.1f},{:.1f})'>{}</g>", x + 6, y - 4, it.swatch);
      s += text_at(x + 16, y, it.label);
      x += 16 + double(it.label.size()) * kLegendCharWidth + 22;
    }
  };
  place(states, PlotFrame::kLegendY);
  place(kinds, PlotFrame::kLegendY + 18);
  return s;
}

std::string lanes_svg(const PlotFrame& f) {
  const double x0 = PlotFrame::kLeft, x1 = PlotFrame::kWidth - PlotFrame::kRight, label_x = x0 - 6;
  std::string s;
  s += hline(x0, x1, PlotFrame::kStructuralY, "grid");
  s += text_at(4, PlotFrame::kStructuralY + 4, "structural", "start", "lane");
  // A grid line per decade; over a wide range, a label on every few of them so labels never overlap.
  const double decade_height = (PlotFrame::kLogBottom - PlotFrame::kLogTop) / (f.hi_decade - f.lo_decade);
  const int label_every = int(std::ceil(14.0 / decade_height));
  for (int k = 0; f.lo_decade + k <= f.hi_decade; ++k) {
    const double e = f.lo_decade + k, y = f.y_error(std::pow(10.0, e));
    s += hline(x0, x1, y, "grid");
    if (k % label_every == 0) s += text_at(label_x, y + 4, fmt::format("1e{}", int(e)), "end");
  }
  s += text_at(4, (PlotFrame::kLogTop + PlotFrame::kLogBottom) / 2, "float outputs:", "start", "lane");
  s += text_at(4, (PlotFrame::kLogTop + PlotFrame::kLogBottom) / 2 + 14, "max abs error", "start", "lane");
  s += hline(x0, x1, PlotFrame::kZeroY, "zero") + text_at(label_x, PlotFrame::kZeroY + 4, "0", "end");
  s += text_at(4, PlotFrame::kZeroY + 4, "exactly 0", "start", "lane");
  for (const auto& [share, label] : {std::pair<double, const char*>{1.0, "100%"}, {1e-2, "1%"}, {PlotFrame::kExactLowShare, "0.01%"}}) {
    const double y = f.y_exact(share);
    s += hline(x0, x1, y, "grid") + text_at(label_x, y + 4, label, "end");
  }
  s += hline(x0, x1, PlotFrame::kExactBottom, "axis") + text_at(label_x, PlotFrame::kExactBottom + 4, "0", "end");
  s += text_at(4, (PlotFrame::kExactTop + PlotFrame::kExactBottom) / 2, "int/bool outputs:", "start", "lane");
  s += text_at(4, (PlotFrame::kExactTop + PlotFrame::kExactBottom) / 2 + 14, "% elements differ", "start", "lane");
  return s;
}

double band_top() { return PlotFrame::kStructuralY - 12; }
double band_height() { return PlotFrame::kExactBottom + 6 - band_top(); }

// Every other module group shaded, so a group's extent reads at a glance.
std::string group_bands_svg(const PlotFrame& f, const std::vector<LayerGroup>& groups) {
  std::string s;
  for (size_t g = 1; g < groups.size(); g += 2) {
    const double x = f.x(groups[g].first) - f.step() / 2;
    s += fmt::format("<rect x='{:.1f}' y='{:.1f}' width='{:.1f}' height='{:.1f}' class='band'/>", x, band_top(),
                     double(groups[g].last - groups[g].first + 1) * f.step(), band_height());
  }
  return s;
}

// Beyond this many other origins (a precision defect strikes every conv), their bands would
// stripe the whole plot: their larger marks and the table's filter show them instead.
constexpr size_t kMaxOtherOriginBands = 8;

// The origin's column in strong red with its label, a few other origins lighter.
std::string origin_bands_svg(const PlotFrame& f, const CompareResult& r) {
  std::string s;
  auto band = [&](int64_t row, const char* cls) {
    const double w = std::max(f.step(), 6.0), x = f.x(size_t(row)) - w / 2;
    s += fmt::format("<rect x='{:.1f}' y='{:.1f}' width='{:.1f}' height='{:.1f}' class='{}'/>", x, band_top(), w, band_height(), cls);
  };
  if (r.other_origins.size() <= kMaxOtherOriginBands) {
    for (int64_t row : r.other_origins) band(row, "originband other");
  }
  if (r.origin < 0) return s;
  band(r.origin, "originband");
  const double x = f.x(size_t(r.origin));
  const char* anchor = x > PlotFrame::kWidth - 200 ? "end" : "start";
  s += fmt::format("<a href='{}' class='originlabel'>{}</a>", row_link(size_t(r.origin)),
                   text_at(x, PlotFrame::kOriginLabelY, "origin: " + r.layers[size_t(r.origin)].name, anchor, "origin"));
  return s;
}

// The tolerance of each float layer as a short level across its column: tolerances are per
// layer, so nothing is drawn between layers that would read as a value there.
std::string tolerance_svg(const PlotFrame& f, const std::vector<LayerMarks>& marks) {
  std::string d;
  for (size_t i = 0; i < marks.size(); ++i) {
    if (!marks[i].float_out) continue;
    const double tol = marks[i].float_out->diff.worst_allowed;
    if (!(tol > 0) || !std::isfinite(tol)) continue;
    const double y = f.y_error(tol);
    d += fmt::format("M{:.1f},{:.1f}H{:.1f}", f.x(i) - f.step() / 2, y, f.x(i) + f.step() / 2);
  }
  return d.empty() ? "" : "<path d='" + d + "' class='tol'/>";
}

// What hovering a layer's column says: its state, each kind of figure, its note.
std::string layer_tooltip(size_t row, const LayerReport& l, const LayerMarks& m) {
  std::string t = fmt::format("#{} {} ({}): {}{}", row, l.name, l.op, state_name(l.state), l.origin ? ", origin" : "");
  if (const OutputVerdict* o = m.float_out) {
    t += fmt::format("\nfloat {}: max abs {:.3g}, tolerance at the worst element {:.3g}", o->role, o->diff.max_abs, o->diff.worst_allowed);
  }
  if (const OutputVerdict* o = m.exact_out) {
    t += fmt::format("\nint/bool {}: {} of {} elements differ (compared exactly)", o->role, o->diff.bad, o->diff.count);
  }
  if (m.structural) t += "\nstructural: no element-wise figures";
  if (const std::string note = l.note(); !note.empty()) t += "\n" + shortened(note, 400);
  return t;
}

// One layer: a transparent column (hover target and tooltip) and its marks, all one link to the
// layer's table row.
std::string layer_svg(const PlotFrame& f, size_t row, const LayerReport& l, const LayerMarks& m) {
  const double x = f.x(row), origin_scale = l.origin ? 1.6 : 1.0;
  const double r = std::max(f.marker_radius() * origin_scale, l.origin ? 5.0 : 0.0);
  const std::string cls = std::string(state_class(l)) + (l.explained && l.state == State::Passed ? " explained" : "");
  std::string s = fmt::format("<a href='{}' class='layer'><title>{}</title>", row_link(row), escape_html(layer_tooltip(row, l, m)));
  s += fmt::format("<rect x='{:.1f}' y='{:.1f}' width='{:.1f}' height='{:.1f}' class='col'/>", x - f.step() / 2, band_top(), f.step(),
                   band_height());
  if (m.structural) s += fmt::format("<path d='{}' class='pt struct {}'/>", cross_path(x, PlotFrame::kStructuralY, r + 1), cls);
  if (const OutputVerdict* o = m.float_out) {
    const double v = o->diff.max_abs;
    if (!std::isfinite(v)) {
      s += fmt::format("<path d='{}' class='pt float {}'/>", up_triangle_path(x, PlotFrame::kLogTop - 6, r + 1), cls);
    } else {
      const double y = v > 0 ? f.y_error(v) : PlotFrame::kZeroY;
      s += fmt::format("<circle cx='{:.1f}' cy='{:.1f}' r='{:.1f}' class='pt float {}'/>", x, y, r, cls);
    }
  }
  if (const OutputVerdict* o = m.exact_out) {
    s += fmt::format("<path d='{}' class='pt exact {}'/>", diamond_path(x, f.y_exact(share_differing(o->diff)), r + 1), cls);
  }
  return s + "</a>";
}

// The x axis: every layer's name when they fit, else the module groups'; each label links to the
// (first) row it names. A label too close to the previous one is left out.
std::string axis_labels_svg(const PlotFrame& f, const std::vector<LayerGroup>& labels) {
  std::string s;
  double last_x = -1e9;
  for (const LayerGroup& g : labels) {
    const double x = (f.x(g.first) + f.x(g.last)) / 2;
    if (x - last_x < PlotFrame::kLabelSpacing) continue;
    last_x = x;
    s += fmt::format("<a href='{}'><text transform='translate({:.1f},{:.1f}) rotate(-{})' text-anchor='end' class='xlabel'>{}</text></a>",
                     row_link(g.first), x + 3, PlotFrame::kAxisY + 6, PlotFrame::kLabelAngle,
                     escape_html(shortened(g.name, kMaxLabelChars)));
  }
  return s;
}

std::vector<LayerGroup> one_group_per_layer(const std::vector<LayerReport>& layers) {
  std::vector<LayerGroup> g;
  for (size_t i = 0; i < layers.size(); ++i) g.push_back({layers[i].name, i, i});
  return g;
}

std::string plot_svg(const CompareResult& r) {
  PlotFrame f;
  f.layers = std::max<size_t>(r.layers.size(), 1);
  std::vector<LayerMarks> marks;
  for (const LayerReport& l : r.layers) marks.push_back(marks_of(l));
  fit_error_scale(marks, f);
  const size_t fitting_labels = size_t(f.plot_width() / PlotFrame::kLabelSpacing);
  // Shaded groups a few layers wide on average, so that they show modules, not single layers.
  const std::vector<LayerGroup> groups = module_groups(r.layers, std::clamp<size_t>(r.layers.size() / 4, 2, fitting_labels));
  const bool name_each_layer = r.layers.size() <= fitting_labels;
  const std::vector<LayerGroup> labels = name_each_layer ? one_group_per_layer(r.layers) : groups;
  std::vector<std::string> label_texts;
  for (const LayerGroup& g : labels) label_texts.push_back(g.name);
  f.label_room = label_room_for(label_texts);

  std::string s = fmt::format(
      "<svg xmlns='http://www.w3.org/2000/svg' class='plot' viewBox='0 0 {:.0f} {:.0f}' width='100%' "
      "preserveAspectRatio='xMidYMin meet'>",
      PlotFrame::kWidth, f.height());
  s += group_bands_svg(f, groups) + origin_bands_svg(f, r) + lanes_svg(f) + legend_svg() + tolerance_svg(f, marks);
  for (size_t i = 0; i < r.layers.size(); ++i) s += layer_svg(f, i, r.layers[i], marks[i]);
  s += axis_labels_svg(f, labels);
  s += text_at(PlotFrame::kWidth - PlotFrame::kRight, f.height() - 4,
               name_each_layer ? "layers in execution order" : "module groups in execution order (hover a column for its layer)", "end",
               "lane");
  return s + "</svg>\n";
}

// ---------------------------------------------------------------------------------------------
// The page's header and table.

std::string header_html(const CompareResult& r, const ReportHeader& h) {
  std::string s = "<p class='meta'>A: " + escape_html(h.a) + "<br>B: " + escape_html(h.b);
  for (const std::string& line : judged_how(r, h)) s += "<br>" + escape_html(line);
  for (const std::string& p : r.provenance) s += "<br>provenance differs: " + escape_html(p);
  return s + "</p><p class='summary'>" + escape_html(summary_line(r)) + "</p>\n";
}

std::string origin_link(const CompareResult& r, int64_t row) {
  const LayerReport& l = r.layers[size_t(row)];
  return fmt::format("<a href='{}'>{}</a> (layer {}, {}, defective: {})", row_link(size_t(row)), escape_html(l.name), l.index,
                     escape_html(l.op), l.defective == Sides::None ? "neither kernel" : sides_name(l.defective));
}

// The origin, linked to its row, with its reason; then any other origins.
std::string origin_html(const CompareResult& r) {
  if (r.origin < 0) return "<p class='origin none'>No origin: no layer shown fails its local check.</p>\n";
  std::string s = "<p class='origin'>Origin: " + origin_link(r, r.origin);
  s += "<br><span class='reason'>" + escape_html(r.layers[size_t(r.origin)].reason) + "</span>";
  if (r.other_origins.empty()) return s + "</p>\n";
  std::string others;
  for (size_t k = 0; k < r.other_origins.size(); ++k) others += (k ? "; " : "") + origin_link(r, r.other_origins[k]);
  if (r.other_origins.size() <= kMaxOtherOriginBands) return s + "<br>Also origins: " + others + "</p>\n";
  // A long list folds away, so that it does not push the plot off the screen.
  return s + fmt::format("</p><details class='origins'><summary>Also {} more origins</summary>{}</details>\n", r.other_origins.size(),
                         others);
}

// Words the filter's menu selects rows by.
std::string row_tags(const LayerReport& l, const LayerMarks& m) {
  std::string t = state_name(l.state);
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (l.state != State::Passed) t += " notpassed";
  if (l.origin) t += " origin";
  if (l.explained) t += " explained";
  if (!l.propagated_from.empty()) t += " propagated";
  if (m.structural) t += " structural";
  if (m.exact_out) t += " exact";
  return t;
}

// The state column sorts by severity: origins first, then failures.
int state_rank(const LayerReport& l) {
  if (l.origin) return 0;
  switch (l.state) {
    case State::Failed: return 1;
    case State::Unchecked: return 2;
    case State::Mistrusted: return 3;
    case State::Passed: return l.explained ? 4 : 5;
    default: return 6;
  }
}

std::string layer_cell(const LayerReport& l, const LayerMarks& m) {
  std::string s = escape_html(l.name);
  if (l.origin) s += "<span class='tag origin'>origin</span>";
  if (m.exact_out) {
    s += "<span class='tag exact' title='integer or bool output, compared exactly: max abs is a difference of values such as "
         "indices, not an error'>int/bool</span>";
  }
  if (m.structural) s += "<span class='tag struct' title='no element-wise figures for some output'>structural</span>";
  return s;
}

std::string table_row(size_t row, const LayerReport& l) {
  const LayerMarks m = marks_of(l);
  const ReportRow x = report_row(l);
  // "exact" bits sort above every figure; "-" (no figures) falls after numbers.
  const std::string bits_key = x.bits == "exact" ? " data-sort='999'" : "";
  return fmt::format(
      "<tr id='{}' class='{}' data-tags='{}'><td>{}</td><td data-sort='{}'>{}</td><td class='l'>{}</td><td class='l'>{}</td>"
      "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td{}>{}</td><td>{}</td><td class='l note'>{}</td></tr>\n",
      row_id(row), state_class(l), row_tags(l, m), row, state_rank(l), x.state, layer_cell(l, m), escape_html(l.op), x.max_abs,
      x.mean_abs, x.max_rel, x.cosine, x.ulp, bits_key, x.bits, x.pct, escape_html(x.note));
}

std::string table_html(const CompareResult& r) {
  std::string s =
      "<div class='controls'>filter <input id='filter' size='36' placeholder='layer, op or note (regular expression)'> "
      "<select id='which'><option value=''>all rows</option><option value='notpassed'>not PASSED</option>"
      "<option value='failed'>FAILED</option><option value='origin'>origins</option><option value='explained'>explained</option>"
      "<option value='propagated'>propagated</option><option value='structural'>structural</option>"
      "<option value='exact'>int/bool outputs</option></select> <span id='shown'></span>; click a header to sort</div>\n"
      "<table id='layers'><thead><tr><th>#</th><th>state</th><th>layer</th><th>op</th><th>max abs</th><th>mean abs</th>"
      "<th>max rel</th><th>cosine</th><th>ULP</th><th>bits</th><th>% out</th><th>note</th></tr></thead><tbody>\n";
  for (size_t i = 0; i < r.layers.size(); ++i) s += table_row(i, r.layers[i]);
  return s + "</tbody></table>\n";
}

// Sorting (numbers as numbers, a cell's data-sort over its text), filtering by a regular
// expression and the menu's tag, and showing a filtered-out row when a plot link targets it.
const char* const kScript = R"(<script>
(function () {
  const table = document.getElementById('layers'), body = table.tBodies[0], rows = Array.from(body.rows);
  const query = document.getElementById('filter'), which = document.getElementById('which'), shown = document.getElementById('shown');
  function key(row, k) {
    const c = row.cells[k], v = c.dataset.sort !== undefined ? c.dataset.sort : c.textContent.trim(), x = parseFloat(v);
    return isNaN(x) ? [1, v] : [0, x];
  }
  table.tHead.addEventListener('click', function (e) {
    const th = e.target.closest('th');
    if (!th) return;
    const dir = th.dataset.dir === 'asc' ? -1 : 1, k = th.cellIndex;
    for (const h of table.tHead.rows[0].cells) delete h.dataset.dir;
    th.dataset.dir = dir > 0 ? 'asc' : 'desc';
    rows.slice().sort(function (a, b) {
      const x = key(a, k), y = key(b, k);
      if (x[0] !== y[0]) return x[0] - y[0];
      return dir * (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0);
    }).forEach(function (r) { body.appendChild(r); });
  });
  function filter() {
    let re = null;
    try { re = new RegExp(query.value, 'i'); } catch (err) { re = null; }
    let n = 0;
    for (const r of rows) {
      const ok = (!re || re.test(r.textContent)) && (which.value === '' || r.dataset.tags.split(' ').includes(which.value));
      r.hidden = !ok;
      n += ok ? 1 : 0;
    }
    shown.textContent = n + ' of ' + rows.length + ' rows shown';
  }
  function reveal() {
    const r = document.getElementById(location.hash.slice(1));
    if (r && r.hidden) { r.hidden = false; r.scrollIntoView(); }
  }
  query.addEventListener('input', filter);
  which.addEventListener('change', filter);
  window.addEventListener('hashchange', reveal);
  filter();
  reveal();
})();
</script>
)";

const char* const kStyle = R"(<style>
body{font-family:sans-serif;margin:16px 20px;color:#222}
h2{margin:0 0 8px}
p{margin:6px 0}
.summary{font-weight:bold}
.origin{font-size:15px}
.origin a{font-weight:bold;color:#b71c1c}
.origin .reason{font-size:12px;color:#555}
details.origins{font-size:13px;margin:4px 0}
details.origins a{color:#b71c1c}
svg.plot{display:block;height:auto;border:1px solid #ddd;margin:10px 0;background:#fff}
svg.plot text{font-size:11px;fill:#333}
svg.plot text.lane{fill:#666;font-style:italic}
svg.plot text.origin{font-weight:bold;fill:#b71c1c}
svg.plot text.xlabel{font-size:10.5px}
svg.plot a:hover text{fill:#1e63c8;text-decoration:underline}
.grid{stroke:#e4e4e4}
.axis{stroke:#999}
.zero{stroke:#444;stroke-dasharray:5 3}
.band{fill:#f1f1f1}
.originband{fill:#c62828;fill-opacity:.16}
.originband.other{fill-opacity:.08}
.tol{fill:none;stroke:#1e63c8;stroke-width:1.4}
.col{fill:#1e63c8;fill-opacity:0}
a.layer:hover .col{fill-opacity:.12}
.pt{stroke-width:1}
.s-passed.pt{fill:#2e7d32;stroke:#2e7d32}
.s-failed.pt{fill:#ef7b7b;stroke:#d32f2f}
.s-origin.pt{fill:#b71c1c;stroke:#000;stroke-width:1.5}
.s-mistrusted.pt{fill:#f0a000;stroke:#b07000}
.s-unchecked.pt{fill:#8e5cc6;stroke:#5e2f96}
.s-skipped.pt{fill:#aaa;stroke:#888}
.pt.explained{fill:#fff;stroke-width:1.8}
.pt.exact{fill-opacity:.85}
.pt.struct{fill:none;stroke-width:2.2}
.s-origin.pt.struct{stroke:#b71c1c;stroke-width:3}
.controls{margin:8px 0;font-size:13px}
table{border-collapse:collapse;font-size:12px}
th{position:sticky;top:0;background:#eee;cursor:pointer;user-select:none}
th[data-dir=asc]::after{content:' \25B2'}
th[data-dir=desc]::after{content:' \25BC'}
td,th{border:1px solid #ccc;padding:2px 6px;text-align:right;vertical-align:top}
td{white-space:nowrap}
td.l{text-align:left}
td.note{white-space:normal;min-width:24em}
tr{scroll-margin-top:40px}
tr.s-failed{background:#fde3e3}
tr.s-origin{background:#f5b5b5;font-weight:bold}
tr.s-mistrusted{background:#ffedc0}
tr.s-unchecked{background:#ece0f8}
tr:target{outline:3px solid #1e63c8;outline-offset:-2px}
.tag{font-size:10px;border-radius:3px;padding:0 4px;margin-left:5px;color:#fff;font-weight:normal;white-space:nowrap}
.tag.origin{background:#b71c1c}
.tag.exact{background:#6a3d9a}
.tag.struct{background:#555}
</style>
)";

}  // namespace

void write_html(const std::string& path, const CompareResult& r, const ReportHeader& h) {
  const std::string page = std::string("<!DOCTYPE html><html><head><meta charset='utf-8'><title>parity compare</title>") + kStyle +
                           "</head><body>\n<h2>parity compare</h2>\n" + header_html(r, h) + origin_html(r) + plot_svg(r) +
                           table_html(r) + kScript + "</body></html>\n";
  write_file_atomically(path, page);
}

}  // namespace parity
