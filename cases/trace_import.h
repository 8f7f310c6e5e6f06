#pragma once
// Import op calls from a PyTorch profiler trace (Kineto's Chrome-trace JSON, plain or gzip).
//
// Operator events ("ph": "X", "cat": "Operator" or "cpu_op") carry "Input Dims" and "Input type"
// when the profiler ran with record_shapes, and, since PyTorch 1.13 or so, "Concrete Inputs"
// (the scalar and list arguments: stride, padding, dim, threshold). Each supported call becomes
// a case named trace.<n>.<op>. Where an argument was not recorded it is inferred when it can be
// and the case is marked `inferred`:
//   conv2d  groups = IC / w[1], dilation 1; stride and padding from the output shape, read off
//           the 4-D input of the next op on the same thread that starts after the conv ends
//           (the layer after it), trying padding k//2, (k-1)//2, 0; without one, stride 1 and
//           padding k//2.
//   cat     dim = the one dimension along which the input shapes differ.
// Calls whose needed arguments are missing and cannot be inferred are skipped and counted.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cases/case_file.h"

namespace parity {

struct TraceImport {
  std::vector<Case> cases;
  int64_t operator_events = 0;  // all operator events read
  int64_t calls = 0;            // supported calls found (before removing duplicates)
  int64_t duplicates = 0;       // calls whose case equals an earlier one (dropped unless keep_all)
  std::map<std::string, int64_t> skipped;  // by op name, with the reason when it is not "unsupported"
};

// Throws parity::Error naming the file when it is not a readable trace.
TraceImport import_trace(const std::string& path, bool keep_all);

// The same from the (decompressed) JSON text; `name` stands for the file in errors.
TraceImport import_trace_text(std::string_view text, const std::string& name, bool keep_all);

}  // namespace parity
