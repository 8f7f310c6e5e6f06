#pragma once
// Writing a CompareResult: an aligned table (colour on a terminal), JSON, CSV, and one
// self-contained HTML page with the table and a per-layer error plot. Every format is written
// from the same LayerReport fields (state, note, explained, origin, defective side), so they
// cannot disagree.
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
void write_html(const std::string& path, const CompareResult& r, const ReportHeader& h);

}  // namespace parity
