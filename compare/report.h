#pragma once
// Writing a CompareResult: an aligned table (colour on a terminal), JSON, CSV, and one
// self-contained HTML page with the table and a per-layer error plot. Every format is written
// from the same LayerReport fields (state, note, explained, origin, defective side), so they
// cannot disagree. The HTML page is written by compare/html_report.cpp.
#include <ostream>
#include <string>

#include "compare/dump_compare.h"

namespace parity {

struct ReportHeader {
  std::string a, b;  // "dir (backend, device)"
  std::string judge;  // the judge backend of the local checks
  std::string precision = "fp32";  // the profile (--precision)
};

// Which rows the terminal table shows and how. The summary line always counts every layer.
struct TableView {
  bool colour = false;
  bool all_tensors = false;  // --all: one more row per output of multi-output layers
  bool failed_only = false;  // --failed: only layers whose state is not PASSED
  int top = 0;               // --top K: the K layers with the largest error/tolerance, largest first; 0: all, in order
  int width = 0;             // a note that would pass this column goes on lines of its own under the row; 0: never
};
void write_table(std::ostream& out, const CompareResult& r, const ReportHeader& h, const TableView& view);
// A layer's largest error relative to its tolerance, over its outputs: |a - b| / tolerance at the
// worst element of float outputs (above 1: beyond tolerance); +infinity for an output of another
// shape, a NaN/Inf mismatch, or differing integers on a layer that did not pass; 0 when equal.
// Integer outputs that differ on a PASSED layer (another valid nms or argsort answer) count 0:
// the layer's own check accepted them.
double error_over_tolerance(const LayerReport& l);
std::string summary_line(const CompareResult& r);
// What an origin's "defective:" line says: the side(s), or which of the two other causes it is
// (the model code rewired it, or the data the runs were given). bisect prints it; the JSON
// carries it (defective_text), so parity_torch's Report says the same words.
std::string defective_text(const LayerReport& l);
void write_json(const std::string& path, const CompareResult& r, const ReportHeader& h);
void write_csv(const std::string& path, const CompareResult& r);
// The page: the header with the origin linked to its row; a plot with one column per layer (float
// errors on a log scale over a baseline for exact zeros, int/bool outputs in a lane of their own,
// structural rows in another, the origin highlighted), every point linking to its table row; and
// the table, sortable and filterable by a few lines of inline script. Nothing is fetched.
void write_html(const std::string& path, const CompareResult& r, const ReportHeader& h);

}  // namespace parity
