// write_html: one self-contained page (no script, style or font fetched): the header with the
// origin linked to its row, the plot (compare/html_plot.cpp) and the table, sortable and
// filterable by a few lines of inline script.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string>

#include "compare/html_plot.h"
#include "compare/report.h"
#include "compare/report_rows.h"
#include "core/atomic_file.h"

namespace parity {

namespace {

using html::escape;
using html::LayerMarks;
using html::row_id;
using html::row_link;

// ---------------------------------------------------------------------------------------------
// The page's header and table.

std::string header_html(const CompareResult& r, const ReportHeader& h) {
  std::string s = "<p class='meta'>A: " + escape(h.a) + "<br>B: " + escape(h.b);
  for (const std::string& line : judged_how(r, h)) s += "<br>" + escape(line);
  for (const std::string& p : r.provenance) s += "<br>provenance differs: " + escape(p);
  return s + "</p><p class='summary'>" + escape(summary_line(r)) + "</p>\n";
}

std::string origin_link(const CompareResult& r, int64_t row) {
  const LayerReport& l = r.layers[size_t(row)];
  return fmt::format("<a href='{}'>{}</a> (layer {}, {}, defective: {})", row_link(size_t(row)), escape(l.name), l.index,
                     escape(l.op), l.defective == Sides::None ? "neither kernel" : sides_name(l.defective));
}

// The origin, linked to its row, with its reason; then any other origins.
std::string origin_html(const CompareResult& r) {
  if (r.origin < 0) return "<p class='origin none'>No origin: no layer shown fails its local check.</p>\n";
  std::string s = "<p class='origin'>Origin: " + origin_link(r, r.origin);
  s += "<br><span class='reason'>" + escape(r.layers[size_t(r.origin)].reason) + "</span>";
  if (r.other_origins.empty()) return s + "</p>\n";
  std::string others;
  for (size_t k = 0; k < r.other_origins.size(); ++k) others += (k ? "; " : "") + origin_link(r, r.other_origins[k]);
  if (r.other_origins.size() <= html::kMaxOtherOriginBands) return s + "<br>Also origins: " + others + "</p>\n";
  // A long list folds away, so that it does not push the plot off the screen.
  return s + fmt::format("</p><details class='origins'><summary>Also {} more origins</summary>{}</details>\n", r.other_origins.size(),
                         others);
}

// Words the "not PASSED only" box and the menu of kinds select rows by.
std::string row_tags(const LayerReport& l, const LayerMarks& m) {
  std::string t = l.verdict_word();
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (!l.passed()) t += " notpassed";
  if (l.origin()) t += " origin";
  if (l.explained()) t += " explained";
  if (!l.propagated_from.empty()) t += " propagated";
  if (m.structural) t += " structural";
  if (m.exact_out) t += " exact";
  return t;
}

// The state column sorts by severity: origins first, then failures.
int state_rank(const LayerReport& l) {
  switch (l.state) {
    case RowState::Origin: return 0;
    case RowState::Structural: return 1;
    case RowState::Propagated: return 2;
    case RowState::Unchecked: return 3;
    case RowState::Mistrusted: return 4;
    case RowState::Explained: return 5;
    case RowState::Passed: return 6;
  }
  return 7;
}

std::string layer_cell(const LayerReport& l, const LayerMarks& m) {
  std::string s = escape(l.name);
  if (l.origin()) s += "<span class='tag origin'>origin</span>";
  if (m.exact_out) {
    s += "<span class='tag exact' title='integer or bool output, compared exactly: max abs is a difference of values such as "
         "indices, not an error'>int/bool</span>";
  }
  if (m.structural) s += "<span class='tag struct' title='no element-wise figures for some output'>structural</span>";
  return s;
}

// The table's columns. Text columns align left; the detail columns give way to the note in a
// narrow window (detail1 first, then detail2); the error columns sort largest first on their
// first click.
struct Column {
  const char* title;
  const char* cls;
  bool largest_first;
};
constexpr Column kColumns[] = {{"#", "", false},
                               {"state", "", false},
                               {"layer", "l", false},
                               {"op", "l", false},
                               {"max abs", "", true},
                               {"mean abs", "detail1", true},
                               {"max rel", "detail1", true},
                               {"cosine", "detail2", false},
                               {"ULP", "detail1", true},
                               {"bits", "detail2", false},
                               {"% out", "", true},
                               {"note", "l note", false}};

std::string td(size_t column, const std::string& content, const std::string& sort_key = "") {
  const char* cls = kColumns[column].cls;
  return fmt::format("<td{}{}>{}</td>", *cls ? fmt::format(" class='{}'", cls) : "",
                     sort_key.empty() ? "" : " data-sort='" + sort_key + "'", content);
}

std::string table_row(size_t row, const LayerReport& l) {
  const LayerMarks m = html::marks_of(l);
  const ReportRow x = report_row(l);
  // "exact" bits sort above every figure; "-" (no figures) falls after numbers.
  const std::string bits_key = x.bits == "exact" ? "999" : "";
  const std::string cells = td(0, std::to_string(row)) + td(1, x.state, std::to_string(state_rank(l))) + td(2, layer_cell(l, m)) +
                            td(3, escape(l.op)) + td(4, x.max_abs) + td(5, x.mean_abs) + td(6, x.max_rel) + td(7, x.cosine) +
                            td(8, x.ulp) + td(9, x.bits, bits_key) + td(10, x.pct) + td(11, escape(x.note));
  return fmt::format("<tr id='{}' class='{}' data-tags='{}'>{}</tr>\n", row_id(row), html::state_class(l), row_tags(l, m), cells);
}

std::string table_html(const CompareResult& r) {
  std::string s =
      "<div class='controls'><label>filter <input id='filter' type='search' size='34' "
      "placeholder='layer, op or note (regular expression)'></label> "
      "<label><input type='checkbox' id='notpassed'> not PASSED only</label> "
      "<select id='which' title='rows of one kind'><option value=''>every kind of row</option><option value='failed'>FAILED</option>"
      "<option value='origin'>origins</option><option value='explained'>explained</option>"
      "<option value='propagated'>propagated</option><option value='structural'>structural</option>"
      "<option value='exact'>int/bool outputs</option></select> <span id='shown'></span>; click a header to sort"
      "<span class='narrowonly'>; more columns in a wider window</span></div>\n"
      "<table id='layers'><thead><tr>";
  for (const Column& c : kColumns) {
    s += fmt::format("<th{}{}>{}</th>", *c.cls ? fmt::format(" class='{}'", c.cls) : "", c.largest_first ? " data-first='desc'" : "",
                     c.title);
  }
  s += "</tr></thead><tbody>\n";
  for (size_t i = 0; i < r.layers.size(); ++i) s += table_row(i, r.layers[i]);
  return s + "</tbody></table>\n";
}

// Sorting (numbers as numbers, a cell's data-sort over its text; a second click reverses),
// filtering by a regular expression, the "not PASSED only" box and the kind menu, and showing a
// filtered-out row when a link targets it.
const char* const kScript = R"(<script>
(function () {
  const table = document.getElementById('layers'), body = table.tBodies[0], rows = Array.from(body.rows);
  const query = document.getElementById('filter'), notPassed = document.getElementById('notpassed');
  const which = document.getElementById('which'), shown = document.getElementById('shown');
  function key(row, k) {
    const c = row.cells[k], v = c.dataset.sort !== undefined ? c.dataset.sort : c.textContent.trim(), x = parseFloat(v);
    return isNaN(x) ? [1, v] : [0, x];
  }
  table.tHead.addEventListener('click', function (e) {
    const th = e.target.closest('th');
    if (!th) return;
    const first = th.dataset.first === 'desc' ? -1 : 1;
    const dir = th.dataset.dir ? (th.dataset.dir === 'asc' ? -1 : 1) : first, k = th.cellIndex;
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
      const tags = r.dataset.tags.split(' ');
      const ok = (!re || re.test(r.textContent)) && (!notPassed.checked || tags.includes('notpassed')) &&
                 (which.value === '' || tags.includes(which.value));
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
  notPassed.addEventListener('change', filter);
  which.addEventListener('change', filter);
  window.addEventListener('hashchange', reveal);
  filter();
  reveal();
})();
</script>
)";

// Below 1000 px the narrow layout of the plot replaces the wide one, so that its text stays
// legible. Below 1200 px and again below 1000 px detail columns give way, so that the note keeps
// room to wrap beside the figures that matter most (max abs, % out).
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
.legend{font-size:12px;margin:12px 0 4px}
.legend div{display:flex;flex-wrap:wrap;gap:3px 18px;margin:2px 0}
.key{display:inline-flex;align-items:center;gap:5px;white-space:nowrap}
.key svg{overflow:visible}
svg.plot{display:block;height:auto;border:1px solid #ddd;margin:4px 0 10px;background:#fff}
svg.plot.narrow-layout{display:none}
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
.s-propagated.pt{fill:#f6c1c1;stroke:#e08080}
.s-origin.pt{fill:#b71c1c;stroke:#000;stroke-width:1.5}
.s-mistrusted.pt{fill:#f0a000;stroke:#b07000}
.s-unchecked.pt{fill:#8e5cc6;stroke:#5e2f96}
.s-skipped.pt{fill:#aaa;stroke:#888}
.pt.explained{fill:#fff;stroke-width:1.8}
.pt.exact{fill-opacity:.85}
.pt.struct{fill:none;stroke-width:2.2}
.s-origin.pt.struct{stroke:#b71c1c;stroke-width:3}
.controls{margin:8px 0;font-size:13px}
.controls label{white-space:nowrap}
.narrowonly{display:none;color:#666}
table{border-collapse:collapse;font-size:12px}
th{position:sticky;top:0;background:#eee;cursor:pointer;user-select:none}
th[data-dir=asc]::after{content:' \25B2'}
th[data-dir=desc]::after{content:' \25BC'}
td,th{border:1px solid #ccc;padding:2px 6px;text-align:right;vertical-align:top}
td{white-space:nowrap}
.l{text-align:left}
td.note{white-space:normal;min-width:24em}
tr{scroll-margin-top:40px}
tr.s-failed{background:#fde3e3}
tr.s-propagated{background:#fdf1f1}
tr.s-origin{background:#f5b5b5;font-weight:bold}
tr.s-mistrusted{background:#ffedc0}
tr.s-unchecked{background:#ece0f8}
tr:target{outline:3px solid #1e63c8;outline-offset:-2px}
.tag{font-size:10px;border-radius:3px;padding:0 4px;margin-left:5px;color:#fff;font-weight:normal;white-space:nowrap}
.tag.origin{background:#b71c1c}
.tag.exact{background:#6a3d9a}
.tag.struct{background:#555}
@media (max-width:1200px){.detail1{display:none}.narrowonly{display:inline}}
@media (max-width:1000px){svg.plot.wide-layout{display:none}svg.plot.narrow-layout{display:block}body{margin:10px 12px}
.detail2{display:none}td.note{min-width:14em}}
</style>
)";

// The legend, then the plot in its two layouts; the style shows the one that fits the window.
std::string plot_html(const CompareResult& r) {
  return html::legend_html() + html::plot_svg(r, 1200, "wide-layout") + html::plot_svg(r, 800, "narrow-layout");
}

}  // namespace

void write_html(const std::string& path, const CompareResult& r, const ReportHeader& h) {
  const std::string page = std::string("<!DOCTYPE html><html><head><meta charset='utf-8'>") +
                           "<meta name='viewport' content='width=device-width'><title>parity compare</title>" + kStyle +
                           "</head><body>\n<h2>parity compare</h2>\n" + header_html(r, h) + origin_html(r) + plot_html(r) +
                           table_html(r) + kScript + "</body></html>\n";
  write_file_atomically(path, page);
}

}  // namespace parity
