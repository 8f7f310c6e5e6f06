// The case-line parser: any text is either refused with parity::Error or parsed into a case
// whose canonical line parses back to itself (the printing and parsing of op lines agree).
#include <string>

#include "cases/case_file.h"
#include "core/error.h"
#include "fuzz/fuzz_target.h"
#include "kernels/backend.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace parity;
  const std::string text(reinterpret_cast<const char*>(data), size);
  Case c;
  try {
    c = parse_case(text, "fuzz.cases:1");
  } catch (const Error&) {
    return 0;
  }
  const Case again = parse_case(c.line, "fuzz-canonical");
  PARITY_FUZZ_CHECK(again.line == c.line);
  // Every parsed line names its inputs with shapes a runner can allocate from.
  (void)op_inputs(c.line);
  return 0;
}
