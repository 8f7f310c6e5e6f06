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

void write_table(std::ostream& out, const CompareResult& r, const ReportHeader& h, bool colour, bool all_tensors);
std::string summary_line(const CompareResult& r);
void write_json(const std::string& path, const CompareResult& r, const ReportHeader& h);
void write_csv(const std::string& path, const CompareResult& r);
// The page: the header with the origin linked to its row; a plot with one column per layer (float
// errors on a log scale over a baseline for exact zeros, int/bool outputs in a lane of their own,
// structural rows in another, the origin highlighted), every point linking to its table row; and
// the table, sortable and filterable by a few lines of inline script. Nothing is fetched.
void write_html(const std::string& path, const CompareResult& r, const ReportHeader& h);

}  // namespace parity
