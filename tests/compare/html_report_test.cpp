// The HTML report's structure on a hand-made comparison whose every row is of a known kind: one
// table row per layer with an id the plot links to (in both layouts of the plot), the origin
// linked from the header, exact zeros on the zero baseline, int/bool outputs in their own lane
// and tagged, structural rows on the plot, notes filled, the table's controls and script,
// balanced tags, nothing fetched.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "compare/report.h"
#include "support/test_support.h"

namespace parity {
namespace {

OutputVerdict float_output(double max_abs, double tolerance, int64_t bad = 0) {
  OutputVerdict t;
  t.role = "out0";
  t.identical = max_abs == 0;
  t.diff.count = 100;
  t.diff.bad = bad;
  t.diff.max_abs = max_abs;
  t.diff.worst_allowed = tolerance;
  if (bad > 0) t.diff.state = State::Failed;
  t.stats.samples = 100;  // the judge gives every float output of matching shape its figures
  return t;
}

// An int64 keep list or argsort: compared exactly, so no precision figures.
OutputVerdict index_output(int64_t bad, int64_t count, double max_abs) {
  OutputVerdict t;
  t.role = "out0";
  t.diff.count = count;
  t.diff.bad = bad;
  t.diff.max_abs = max_abs;
  t.diff.state = bad > 0 ? State::Failed : State::Passed;
  return t;
}

LayerReport layer(const std::string& name, const std::string& op, RowState state, std::vector<OutputVerdict> outputs) {
  LayerReport l;
  l.name = name;
  l.op = op;
  l.state = state;
  l.verdict.state = state == RowState::Passed || state == RowState::Explained ? State::Passed
                    : state == RowState::Unchecked                             ? State::Unchecked
                                                                               : State::Failed;
  l.verdict.outputs = std::move(outputs);
  return l;
}

// Rows, in order: exact zero, rounding, the origin, an index output, a layer B lacks, an
// explained layer, and a second origin.
CompareResult sample_result() {
  CompareResult r;
  r.layers.push_back(layer("model.0.conv", "conv2d", RowState::Passed, {float_output(0, 0)}));
  r.layers.push_back(layer("model.0.act", "silu", RowState::Passed, {float_output(2e-6, 1e-5)}));
  LayerReport origin = layer("model.1.conv", "conv2d", RowState::Origin, {float_output(0.05, 1.2e-5, 1600)});
  origin.cause = OriginCause::Kernel;
  origin.defective = Sides::B;
  origin.reason = "B is not the judge's on B's own inputs";
  r.layers.push_back(origin);
  LayerReport sort = layer("nms.0.sort", "argsort", RowState::Propagated, {index_output(10, 50, 37)});
  sort.propagated_from = "model.1.conv";
  sort.reason = "each side matches the judge on its own inputs: out0: 10 of 50 elements differ";
  r.layers.push_back(sort);
  LayerReport missing = layer("nms.0.output", "index", RowState::Structural, {});
  missing.reason = "only in A";
  r.layers.push_back(missing);
  LayerReport explained = layer("model.2.cv1.conv", "conv2d", RowState::Explained, {float_output(3e-4, 2e-5, 3)});
  explained.reason = "each side matches the judge on its own inputs: out0: A < B";
  r.layers.push_back(explained);
  LayerReport second = layer("model.3.conv", "conv2d", RowState::Origin, {float_output(0.1, 1e-5, 7)});
  second.cause = OriginCause::Kernel;
  second.defective = Sides::A;
  second.reason = "A is not the judge's on A's own inputs";
  r.layers.push_back(second);
  r.origin = 2;
  r.other_origins = {6};
  r.passed = 3, r.failed = 4, r.structural = 1, r.explained = 1;
  return r;
}

std::string html_of(const CompareResult& r) {
  test::TempDir dir;
  write_html(dir.file("r.html"), r, ReportHeader{"a (ref, cpu)", "b (aten, cpu)", "ref", "fp32"});
  return test::read_text(dir.file("r.html"));
}

std::vector<std::string> all_matches(const std::string& text, const std::string& pattern) {
  std::vector<std::string> found;
  const std::regex re(pattern);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) found.push_back((*it)[1]);
  return found;
}

// One layout of the plot: the svg element whose class names `layout`.
std::string plot_of(const std::string& html, const std::string& layout) {
  const size_t at = html.find("<svg class='plot " + layout + "'");
  if (at == std::string::npos) return "";
  return html.substr(at, html.find("</svg>", at) - at);
}

// The plot's part for one row: its link, hover column and marks (the first layout's).
std::string plot_layer(const std::string& html, size_t row) {
  const std::string open = "<a href='#L" + std::to_string(row) + "' class='layer'>";
  const size_t at = html.find(open);
  if (at == std::string::npos) return "";
  return html.substr(at, html.find("</a>", at) - at);
}

std::string table_row(const std::string& html, size_t row) {
  const std::string open = "<tr id='L" + std::to_string(row) + "'";
  const size_t at = html.find(open);
  if (at == std::string::npos) return "";
  return html.substr(at, html.find("</tr>", at) - at);
}

// The first element closed out of order or left open, or "" when every element opened is closed
// in order. Void elements and self-closed SVG elements need no closing tag; the text of scripts
// and styles is skipped (it may hold '<').
std::string unbalanced_tag(const std::string& html) {
  static const std::set<std::string> kVoid = {"!doctype", "meta", "br", "input", "wbr"};
  const std::regex tag("<(/?)([a-zA-Z!][a-zA-Z0-9]*)[^>]*?(/?)>");
  std::vector<std::string> open;
  auto at = html.cbegin();
  for (std::smatch m; std::regex_search(at, html.cend(), m, tag);) {
    std::string name = m[2];
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    at = m[0].second;
    if (kVoid.count(name) || m[3].length() > 0) continue;
    if (m[1].length() == 0) {
      open.push_back(name);
      if (name == "script" || name == "style") {
        const size_t close = html.find("</" + name + ">", size_t(at - html.cbegin()));
        if (close == std::string::npos) return "<" + name + "> never closed";
        at = html.cbegin() + std::ptrdiff_t(close);
      }
      continue;
    }
    if (open.empty() || open.back() != name) return "</" + name + "> closes " + (open.empty() ? "nothing" : "<" + open.back() + ">");
    open.pop_back();
  }
  return open.empty() ? "" : "<" + open.back() + "> never closed";
}

double number_after(const std::string& text, const std::string& key) {
  const size_t at = text.find(key);
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + key.size()));
}

double zero_baseline_y(const std::string& html) {
  std::smatch m;
  const bool found = std::regex_search(html, m, std::regex("<line [^>]*y1='([0-9.]+)'[^>]*class='zero'/>"));
  return found ? std::stod(m[1]) : -1;
}

TEST(HtmlReport, OneRowPerLayerEachLinkedFromThePlot) {
  const CompareResult r = sample_result();
  const std::string html = html_of(r);
  const std::vector<std::string> ids = all_matches(html, "<tr id='(L[0-9]+)'");
  ASSERT_EQ(ids.size(), r.layers.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(ids[i], "L" + std::to_string(i));
    const std::string row = table_row(html, i);
    EXPECT_NE(row.find("<td class='l'>" + r.layers[i].name + "<"), std::string::npos) << row;
    // Each layout of the plot has a column linking to the row.
    for (const char* layout : {"wide-layout", "narrow-layout"}) {
      const std::string plot = plot_of(html, layout);
      ASSERT_FALSE(plot.empty()) << layout;
      EXPECT_NE(plot.find("<a href='#L" + std::to_string(i) + "' class='layer'>"), std::string::npos) << layout << " row " << i;
    }
  }
  // Every link on the page lands on a row.
  for (const std::string& target : all_matches(html, "href='#([^']*)'")) {
    EXPECT_NE(std::find(ids.begin(), ids.end(), target), ids.end()) << target;
  }
}

TEST(HtmlReport, OriginLinkedFromTheHeaderAndHighlighted) {
  const std::string html = html_of(sample_result());
  const std::string header = html.substr(0, html.find("<svg"));
  EXPECT_NE(header.find("Origin: <a href='#L2'>model.1.conv</a>"), std::string::npos) << header;
  EXPECT_NE(header.find("defective: B"), std::string::npos) << header;
  EXPECT_NE(header.find("Also origins: <a href='#L6'>model.3.conv</a>"), std::string::npos) << header;
  EXPECT_NE(plot_layer(html, 2).find("class='pt float s-origin'"), std::string::npos) << plot_layer(html, 2);
  EXPECT_NE(html.find("class='originband'"), std::string::npos);
  EXPECT_NE(html.find("class='originband other'"), std::string::npos);
  EXPECT_NE(table_row(html, 2).find("class='s-origin'"), std::string::npos) << table_row(html, 2);
  EXPECT_EQ(table_row(html, 1).find("s-origin"), std::string::npos) << table_row(html, 1);
}

TEST(HtmlReport, ExactZerosSitOnTheZeroBaseline) {
  const std::string html = html_of(sample_result());
  const double zero_y = zero_baseline_y(html);
  ASSERT_GT(zero_y, 0);
  const std::string exact = plot_layer(html, 0), rounding = plot_layer(html, 1);
  EXPECT_DOUBLE_EQ(number_after(exact, "cy='"), zero_y) << exact;
  // A non-zero error sits on the log scale, above the baseline, and its tolerance is drawn.
  const double rounding_y = number_after(rounding, "cy='");
  EXPECT_GT(rounding_y, 0) << rounding;
  EXPECT_LT(rounding_y, zero_y - 10) << rounding;
  EXPECT_NE(html.find("class='tol'"), std::string::npos);
}

TEST(HtmlReport, IntOutputsInTheirOwnLaneAndTagged) {
  const std::string html = html_of(sample_result());
  const std::string sort = plot_layer(html, 3);
  // A diamond below the zero baseline, not a dot on the float scale: its max abs (37) is a
  // difference of indices.
  EXPECT_NE(sort.find("class='pt exact s-propagated'"), std::string::npos) << sort;
  EXPECT_EQ(sort.find("pt float"), std::string::npos) << sort;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(sort, m, std::regex("d='M[0-9.]+,[0-9.]+L[0-9.]+,([0-9.]+)L"))) << sort;
  const double y = std::stod(m[1]);
  EXPECT_GT(y, zero_baseline_y(html)) << sort;
  // Above the lane's own line for "no element differs".
  std::smatch none;
  ASSERT_TRUE(std::regex_search(html, none, std::regex("<line [^>]*y1='([0-9.]+)'[^>]*class='axis'/>")));
  EXPECT_LT(y, std::stod(none[1]) - 5) << sort;
  EXPECT_NE(sort.find("10 of 50 elements differ"), std::string::npos) << sort;
  EXPECT_NE(table_row(html, 3).find("class='tag exact'"), std::string::npos) << table_row(html, 3);
  EXPECT_EQ(table_row(html, 1).find("class='tag exact'"), std::string::npos) << table_row(html, 1);
  // The float scale is fitted to float errors only: it tops out at 1e-1 for 0.1, not at 1e2 for 37.
  EXPECT_NE(html.find(">1e-1</text>"), std::string::npos);
  EXPECT_EQ(html.find(">1e0</text>"), std::string::npos);
}

TEST(HtmlReport, NonFiniteErrorsOnALineOfTheirOwn) {
  CompareResult r;
  r.layers.push_back(layer("model.0.act", "silu", RowState::Unchecked, {float_output(std::numeric_limits<double>::infinity(), 0, 1)}));
  r.layers.push_back(layer("model.1.conv", "conv2d", RowState::Unchecked, {float_output(1e3, 1e-5, 5)}));
  const std::string html = html_of(r);
  std::smatch line;
  ASSERT_TRUE(std::regex_search(html, line, std::regex("<line [^>]*y1='([0-9.]+)'[^>]*/><text [^>]*>NaN/Inf</text>")));
  const double nonfinite_y = std::stod(line[1]);
  // An up triangle whose base sits r below the line: M x,y-r L x+r,y+r L x-r,y+r.
  const std::string inf = plot_layer(html, 0);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(inf, m, std::regex("d='M([0-9.]+),([0-9.]+)L([0-9.]+),([0-9.]+)L[^']*Z' class='pt float"))) << inf;
  const double top = std::stod(m[2]), base = std::stod(m[4]), r_ = (base - top) / 2;
  EXPECT_NEAR(top + r_, nonfinite_y, 0.11) << inf;
  // Above the largest finite error, which tops the log scale.
  EXPECT_LT(nonfinite_y, number_after(plot_layer(html, 1), "cy='") - 10);
  EXPECT_NE(inf.find("max abs inf"), std::string::npos) << inf;
}

TEST(HtmlReport, StructuralRowsOnThePlot) {
  const std::string html = html_of(sample_result());
  const std::string missing = plot_layer(html, 4);
  EXPECT_NE(missing.find("class='pt struct s-failed'"), std::string::npos) << missing;
  EXPECT_EQ(missing.find("pt float"), std::string::npos) << missing;
  EXPECT_NE(table_row(html, 4).find("class='tag struct'"), std::string::npos) << table_row(html, 4);
  EXPECT_EQ(plot_layer(html, 1).find("pt struct"), std::string::npos) << plot_layer(html, 1);
}

TEST(HtmlReport, NotesFilledAndEscaped) {
  const CompareResult r = sample_result();
  const std::string html = html_of(r);
  EXPECT_NE(table_row(html, 5).find("each side matches the judge on its own inputs: out0: A &lt; B"), std::string::npos)
      << table_row(html, 5);
  // A propagated row names its origin and what differs; what PROPAGATED means is said once.
  EXPECT_NE(table_row(html, 3).find("PROPAGATED"), std::string::npos) << table_row(html, 3);
  EXPECT_NE(table_row(html, 3).find("from model.1.conv: out0: 10 of 50 elements differ"), std::string::npos) << table_row(html, 3);
  EXPECT_EQ(html.find("A < B"), std::string::npos);
  // Explained passes are drawn hollow, apart from plain passes.
  EXPECT_NE(plot_layer(html, 5).find("s-passed explained"), std::string::npos) << plot_layer(html, 5);
  EXPECT_EQ(plot_layer(html, 1).find("explained"), std::string::npos) << plot_layer(html, 1);
}

TEST(HtmlReport, SelfContainedAndScalesWithTheWindow) {
  const std::string html = html_of(sample_result());
  // Nothing is fetched: no address, no source, no stylesheet link or import, no font.
  for (const char* fetch : {"http", "//", " src=", "<link", "@import", "url(", "@font-face"}) {
    EXPECT_EQ(html.find(fetch), std::string::npos) << fetch;
  }
  // Both layouts are drawn 100% wide in viewBox units; the style shows the one that fits.
  for (const char* svg : {"<svg class='plot wide-layout' viewBox='0 0 1200 ", "<svg class='plot narrow-layout' viewBox='0 0 800 "}) {
    const size_t at = html.find(svg);
    ASSERT_NE(at, std::string::npos) << svg;
    EXPECT_NE(html.substr(at, html.find('>', at) - at).find("width='100%'"), std::string::npos) << svg;
  }
  EXPECT_NE(html.find("@media (max-width:1000px){svg.plot.wide-layout{display:none}svg.plot.narrow-layout{display:block}"),
            std::string::npos);
  EXPECT_EQ(unbalanced_tag(html), "");
}

TEST(HtmlReport, TagCheckFindsUnbalancedTags) {
  EXPECT_EQ(unbalanced_tag("<p>a<br><svg><path d='M0,0'/></svg></p><script>if (a < b) x();</script>"), "");
  EXPECT_EQ(unbalanced_tag("<div><span></div>"), "</div> closes <span>");
  EXPECT_EQ(unbalanced_tag("<table><tr><td>1</td></tr>"), "<table> never closed");
}

TEST(HtmlReport, TableSortableAndFilterableByItsOwnScript) {
  const std::string html = html_of(sample_result());
  const size_t script = html.find("<script>");
  ASSERT_NE(script, std::string::npos);
  const std::string code = html.substr(script, html.find("</script>", script) - script);
  // The controls the script reads, each used by it.
  for (const char* control : {"<input id='filter' type='search'", "<input type='checkbox' id='notpassed'>", "<select id='which'"}) {
    EXPECT_NE(html.find(control), std::string::npos) << control;
  }
  for (const char* use : {"getElementById('filter')", "getElementById('notpassed')", "notPassed.checked", "getElementById('which')",
                          "tHead.addEventListener('click'", ".sort(", "r.hidden"}) {
    EXPECT_NE(code.find(use), std::string::npos) << use;
  }
  // "not PASSED only" keeps exactly the rows tagged notpassed: the failed ones, not the passed.
  for (size_t row : {2u, 3u, 4u, 6u}) EXPECT_NE(table_row(html, row).find(" notpassed"), std::string::npos) << row;
  for (size_t row : {0u, 1u, 5u}) EXPECT_EQ(table_row(html, row).find("notpassed"), std::string::npos) << row;
  // The state column sorts by severity, the origin first; error columns sort largest first.
  EXPECT_NE(table_row(html, 2).find("<td data-sort='0'>FAILED*</td>"), std::string::npos) << table_row(html, 2);
  EXPECT_NE(html.find("<th data-first='desc'>max abs</th>"), std::string::npos);
  // The legend is the page's text, outside the plot, so it wraps with the window.
  const size_t legend = html.find("<div class='legend'>");
  ASSERT_NE(legend, std::string::npos);
  EXPECT_LT(legend, html.find("<svg class='plot"));
  EXPECT_NE(html.find("int/bool output", legend), std::string::npos);
}

std::vector<std::string> axis_labels(const std::string& plot) { return all_matches(plot, "class='xlabel'>([^<]*)</text>"); }

// Each axis label links to the row it names (a group's first row), and no two labels crowd each
// other: their rotated text is at least 15 viewBox units apart.
void expect_linked_and_spaced(const std::string& plot, const CompareResult& r) {
  const std::regex label("<a href='#L([0-9]+)'><text transform='translate\\(([0-9.]+),[^>]*class='xlabel'>([^<]*)</text></a>");
  double last_x = -1e9;
  size_t n = 0;
  for (auto it = std::sregex_iterator(plot.begin(), plot.end(), label); it != std::sregex_iterator(); ++it, ++n) {
    const std::string& name = r.layers[std::stoul((*it)[1])].name;
    EXPECT_EQ(name.rfind((*it)[3].str(), 0), 0u) << (*it)[3] << " links to " << name;
    const double x = std::stod((*it)[2]);
    EXPECT_GE(x - last_x, 15.0) << (*it)[3];
    last_x = x;
  }
  EXPECT_EQ(n, axis_labels(plot).size());
}

TEST(HtmlReport, AxisNamesEachLayerWhenTheyFit) {
  const CompareResult r = sample_result();
  const std::string html = html_of(r);
  for (const char* layout : {"wide-layout", "narrow-layout"}) {
    const std::string plot = plot_of(html, layout);
    const std::vector<std::string> labels = axis_labels(plot);
    ASSERT_EQ(labels.size(), r.layers.size()) << layout;
    for (size_t i = 0; i < labels.size(); ++i) EXPECT_EQ(labels[i], r.layers[i].name) << layout;
    expect_linked_and_spaced(plot, r);
  }
}

TEST(HtmlReport, AxisNamesModuleGroupsWhenLayersDoNotFit) {
  CompareResult r;
  for (int k = 0; k < 100; ++k) {
    for (const char* part : {".cv1.conv", ".cv1.act", ".cv2.conv"}) {
      r.layers.push_back(layer("model." + std::to_string(k) + part, "conv2d", RowState::Passed, {float_output(1e-6, 1e-5)}));
    }
  }
  const std::string html = html_of(r);
  for (const char* layout : {"wide-layout", "narrow-layout"}) {
    const std::string plot = plot_of(html, layout);
    const std::vector<std::string> labels = axis_labels(plot);
    ASSERT_FALSE(labels.empty()) << layout;
    EXPECT_LT(labels.size(), 100u) << layout;  // crowded groups are left out, never drawn over each other
    EXPECT_EQ(labels.front(), "model.0") << layout;
    for (const std::string& l : labels) EXPECT_TRUE(std::regex_match(l, std::regex("model\\.[0-9]+"))) << l;
    expect_linked_and_spaced(plot, r);
  }
  // The narrow layout has room for fewer labels.
  EXPECT_LT(axis_labels(plot_of(html, "narrow-layout")).size(), axis_labels(plot_of(html, "wide-layout")).size());
  EXPECT_EQ(all_matches(html, "<tr id='(L[0-9]+)'").size(), 300u);
}

}  // namespace
}  // namespace parity
