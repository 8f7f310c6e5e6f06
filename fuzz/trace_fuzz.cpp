// The profiler-trace importer: any text is either refused with parity::Error or imported into
// cases whose lines are canonical (each parses back to itself).
#include <string_view>

#include "cases/case_file.h"
#include "cases/trace_import.h"
#include "core/error.h"
#include "fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace parity;
  TraceImport r;
  try {
    r = import_trace_text(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json", false);
  } catch (const Error&) {
    return 0;
  }
  PARITY_FUZZ_CHECK(int64_t(r.cases.size()) <= r.calls && r.calls <= r.operator_events);
  for (const Case& c : r.cases) PARITY_FUZZ_CHECK(parse_case(c.line, "fuzz-import").line == c.line);
  return 0;
}
