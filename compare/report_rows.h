#pragma once
// The cells of one layer's row and the header lines, shared by the terminal table
// (compare/report.cpp) and the HTML page (compare/html_report.cpp), so that both print the same
// figures from the same LayerReport fields. Internal to compare/.
#include <string>
#include <vector>

#include "compare/report.h"

namespace parity {

struct ReportRow {
  std::string state, max_abs, mean_abs, max_rel, cosine, ulp, bits, pct, worst, name, note;
};

// The row of one output `w` (null: a layer without element-wise figures) of layer `l`.
ReportRow report_row(const LayerReport& l, const TensorDiff* w, const PrecisionStats* st, const std::string& name);
// The layer's row: its worst output's figures, and LayerReport::note().
ReportRow report_row(const LayerReport& l);

// The header lines every format shows: the judge, the profile, and dtypes compared widened.
std::vector<std::string> judged_how(const CompareResult& r, const ReportHeader& h);

}  // namespace parity
