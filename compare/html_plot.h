#pragma once
// The HTML page's plot (compare/html_plot.cpp) and what the page's table shares with it: row
// anchors, the marks a layer gets, the colour class of its state. Internal to compare/.
#include <cstddef>
#include <string>

#include "compare/report.h"

namespace parity::html {

// Attributes are written in single quotes, so both quote characters are escaped.
std::string escape(const std::string& s);

// Every layer's table row has the id "L<row>"; the plot, the axis and the header link to it.
std::string row_id(size_t row);
std::string row_link(size_t row);

// What the plot shows of one layer.
struct LayerMarks {
  const OutputVerdict* float_out = nullptr;  // the worst float output
  const OutputVerdict* exact_out = nullptr;  // the worst integer or bool output
  // No element-wise figures for some output: the layer is missing on one side, the output
  // counts differ, or an output has another shape or dtype.
  bool structural = false;
};
LayerMarks marks_of(const LayerReport& l);

// The colour class of a layer's marks and row: the origin above its state.
const char* state_class(const LayerReport& l);

// Beyond this many other origins (a precision defect strikes every conv), their bands would
// stripe the whole plot and their links would fill the header: larger marks, a folded list and
// the table's filter show them instead.
constexpr size_t kMaxOtherOriginBands = 8;

// The key to the plot's marks, as HTML that wraps with the window and keeps its size.
std::string legend_html();

// The plot as inline SVG, `width` viewBox units wide (it is drawn 100% of the page's width, so
// text scales by window width / `width`): a lane for structural rows, float errors on a log scale
// over a baseline for exact zeros, integer and bool outputs in a lane of their own, the origin's
// column highlighted, and an x axis of layer or module-group names. Every layer's column links to
// its table row. `cls` is added to the svg element's class.
std::string plot_svg(const CompareResult& r, double width, const char* cls);

}  // namespace parity::html
