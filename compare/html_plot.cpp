// The HTML page's plot: inline SVG in viewBox units, drawn as wide as the page, so it scales with
// the window. Two layouts of it, a wide and a narrow one, let text stay legible on small
// windows; the page shows the one that fits. Every layer is one clickable column that jumps to
// its table row (id "L<row>").
#include "compare/html_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace parity::html {

std::string escape(const std::string& s) {
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

namespace {

// Whether an output was compared value for value (integers and bools: indices, keep lists,
// masks) rather than under a float tolerance. The verdict does not carry dtypes, but the judge
// gives every float output of matching shape effective-precision figures (samples > 0) and no
// integer or bool output any; so an output with elements and no figures was compared exactly.
// Its max abs is then a difference of indices, not an error, and must not share the float scale.
bool compared_exactly(const OutputVerdict& t) { return !t.diff.structural && t.diff.count > 0 && t.stats.samples == 0; }

// The order LayerVerdict::worst() uses: most elements out, then the largest error.
bool worse_than(const TensorDiff& x, const TensorDiff& y) { return x.bad > y.bad || (x.bad == y.bad && x.max_abs > y.max_abs); }

}  // namespace

LayerMarks marks_of(const LayerReport& l) {
  LayerMarks m;
  m.structural = l.structural() || l.verdict.structural || l.verdict.outputs.empty();
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

const char* state_class(const LayerReport& l) {
  switch (l.state) {
    case RowState::Origin: return "s-origin";
    case RowState::Propagated: return "s-propagated";
    case RowState::Passed:
    case RowState::Explained: return "s-passed";
    case RowState::Structural: return "s-failed";
    case RowState::Mistrusted: return "s-mistrusted";
    case RowState::Unchecked: return "s-unchecked";
  }
  return "s-failed";
}

namespace {

double share_differing(const TensorDiff& d) { return d.count > 0 ? double(d.bad) / double(d.count) : 0.0; }

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
// top to bottom: the origin's label; structural rows; infinite float errors; float errors on a
// log scale; the baseline where float errors of exactly 0 sit; integer and bool outputs, by the
// share of elements differing; the x axis's labels. Only the width changes between layouts: text
// keeps its size in viewBox units, so a narrower viewBox draws it larger on the same window.

struct PlotFrame {
  static constexpr double kLeft = 150, kRight = 16;  // left: the lanes' names and the scales' ticks
  static constexpr double kOriginLabelY = 14;
  static constexpr double kStructuralY = 30;
  // Float errors that are infinite (NaN or Inf positions differ): above every finite one, on a
  // line of their own, so they never read as a large finite value.
  static constexpr double kNonFiniteY = 50;
  static constexpr double kLogTop = 70, kLogBottom = 286;
  static constexpr double kZeroY = 310;
  // Shares of elements differing on a log scale from kExactLowShare (kExactLowY) to all of them
  // (kExactTop), so that one wrong index in thousands still stands clear of none (kExactBottom).
  static constexpr double kExactTop = 330, kExactLowY = 376, kExactBottom = 390;
  static constexpr double kExactLowShare = 1e-4;
  static constexpr double kAxisY = 402;
  static constexpr double kLabelFont = 10.5;  // x labels, rotated by kLabelAngle
  static constexpr double kLabelAngle = 55;
  static constexpr double kLabelSpacing = 15;  // the least gap between two rotated labels

  double width = 1200;
  size_t layers = 1;
  double lo_decade = -9, hi_decade = -3;  // the log scale's range, powers of ten
  double label_room = 40;                 // below kAxisY

  double plot_width() const { return width - kLeft - kRight; }
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
  return fmt::format("<text x='{:.1f}' y='{:.1f}' text-anchor='{}' class='{}'>{}</text>", x, y, anchor, cls, escape(text));
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

// Points up, on the NaN/Inf line above the log scale: an error that is infinite (NaN/Inf positions
// differ), which no finite scale holds.
std::string up_triangle_path(double x, double y, double r) {
  return fmt::format("M{:.1f},{:.1f}L{:.1f},{:.1f}L{:.1f},{:.1f}Z", x, y - r, x + r, y + r, x - r, y + r);
}

std::string lanes_svg(const PlotFrame& f) {
  const double x0 = PlotFrame::kLeft, x1 = f.width - PlotFrame::kRight, label_x = x0 - 6;
  std::string s;
  s += hline(x0, x1, PlotFrame::kStructuralY, "grid");
  s += text_at(4, PlotFrame::kStructuralY + 4, "no figures", "start", "lane");
  s += hline(x0, x1, PlotFrame::kNonFiniteY, "grid") + text_at(label_x, PlotFrame::kNonFiniteY + 4, "NaN/Inf", "end");
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
  const char* anchor = x > f.width - 200 ? "end" : "start";
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
  std::string t = fmt::format("#{} {} ({}): {}{}", row, l.name, l.op, l.verdict_word(), l.origin() ? ", origin" : "");
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
  const double x = f.x(row), origin_scale = l.origin() ? 1.6 : 1.0;
  const double r = std::max(f.marker_radius() * origin_scale, l.origin() ? 5.0 : 0.0);
  const std::string cls = std::string(state_class(l)) + (l.explained() ? " explained" : "");
  std::string s = fmt::format("<a href='{}' class='layer'><title>{}</title>", row_link(row), escape(layer_tooltip(row, l, m)));
  s += fmt::format("<rect x='{:.1f}' y='{:.1f}' width='{:.1f}' height='{:.1f}' class='col'/>", x - f.step() / 2, band_top(), f.step(),
                   band_height());
  if (m.structural) s += fmt::format("<path d='{}' class='pt struct {}'/>", cross_path(x, PlotFrame::kStructuralY, r + 1), cls);
  if (const OutputVerdict* o = m.float_out) {
    const double v = o->diff.max_abs;
    if (!std::isfinite(v)) {
      s += fmt::format("<path d='{}' class='pt float {}'/>", up_triangle_path(x, PlotFrame::kNonFiniteY, r + 1), cls);
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
                     escape(shortened(g.name, kMaxLabelChars)));
  }
  return s;
}

std::vector<LayerGroup> one_group_per_layer(const std::vector<LayerReport>& layers) {
  std::vector<LayerGroup> g;
  for (size_t i = 0; i < layers.size(); ++i) g.push_back({layers[i].name, i, i});
  return g;
}

}  // namespace

// Two lines of keys: the states' colours, then what each kind of mark stands for.
std::string legend_html() {
  struct Key {
    std::string swatch, label;
  };
  const std::vector<Key> states = {
      {"<circle r='4' class='pt s-passed'/>", "passed"},
      {"<circle r='4' class='pt s-passed explained'/>", "passed: each side matches the judge on its own inputs"},
      {"<circle r='4' class='pt s-failed'/>", "failed"},
      {"<circle r='4' class='pt s-propagated'/>", "propagated from an origin upstream"},
      {"<rect x='-4' y='-8' width='8' height='16' class='originband'/><circle r='5' class='pt s-origin'/>", "origin (its column red)"},
      {"<circle r='4' class='pt s-mistrusted'/>", "mistrusted"},
      {"<circle r='4' class='pt s-unchecked'/>", "unchecked"},
      {"<circle r='4' class='pt s-skipped'/>", "skipped"}};
  const std::vector<Key> kinds = {
      {"<circle r='3.5' class='pt s-passed'/>", "float: max abs error (log), exactly 0 on the dashed line"},
      {"<path d='" + up_triangle_path(0, 0, 4.5) + "' class='pt s-failed'/>", "NaN/Inf positions differ"},
      {"<path d='M-7,0L7,0' class='tol'/>", "tolerance at the worst element"},
      {"<path d='" + diamond_path(0, 0, 4.5) + "' class='pt s-passed'/>", "int/bool (indices, masks): share of elements differing"},
      {"<path d='" + cross_path(0, 0, 4) + "' class='pt struct s-failed'/>", "no element-wise figures: on one side only, another shape or call"}};
  auto line = [](const std::vector<Key>& keys) {
    std::string s = "<div>";
    for (const Key& k : keys) {
      s += "<span class='key'><svg viewBox='-8 -8 16 16' width='16' height='16'>" + k.swatch + "</svg>" + escape(k.label) + "</span>";
    }
    return s + "</div>";
  };
  return "<div class='legend'>" + line(states) + line(kinds) + "</div>\n";
}

std::string plot_svg(const CompareResult& r, double width, const char* cls) {
  PlotFrame f;
  f.width = width;
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
      "<svg class='plot {}' viewBox='0 0 {:.0f} {:.0f}' width='100%' "
      "preserveAspectRatio='xMidYMin meet'>",
      cls, f.width, f.height());
  s += group_bands_svg(f, groups) + origin_bands_svg(f, r) + lanes_svg(f) + tolerance_svg(f, marks);
  for (size_t i = 0; i < r.layers.size(); ++i) s += layer_svg(f, i, r.layers[i], marks[i]);
  s += axis_labels_svg(f, labels);
  s += text_at(f.width - PlotFrame::kRight, f.height() - 4,
               name_each_layer ? "layers in execution order" : "module groups in execution order (hover a column for its layer)", "end",
               "lane");
  return s + "</svg>\n";
}

}  // namespace parity::html
