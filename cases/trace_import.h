#pragma once
// Import op calls from a PyTorch profiler trace (Kineto's Chrome-trace JSON, plain or gzip).
//
// Operator events ("ph": "X", "cat": "Operator" or "cpu_op") carry "Input Dims" and "Input type"
// when the profiler ran with record_shapes, and, since PyTorch 1.13 or so, "Concrete Inputs"
// (the scalar and list arguments: stride, padding, dim, threshold). Where an argument was not
// recorded it is inferred when it can be and the case is marked `inferred`:
//   conv2d  groups = IC / w[1], dilation 1; stride and padding from the output shape, read off
//           the 4-D input of the next op on the same thread that starts after the conv ends
//           (the layer after it), trying padding k//2, (k-1)//2, 0; without one, stride 1 and
//           padding k//2.
//   cat     dim = the one dimension along which the input shapes differ.
// Calls whose needed arguments are missing and cannot be inferred are skipped and counted.
//
// Only the forward pass is imported (unless keep_all): a training trace also records the
// backward pass and the optimiser, whose calls (gradient sums, parameter updates shaped like
// the weights) are not what the model computes. The rule is in trace_import.cpp, at
// `part_of_step`.
//
// Cases are named by the module that made the call when the trace records the module
// hierarchy: "nn.Module: Conv2d_3" events (the Python tracer's, with_stack=True or
// with_modules=True) give names such as ResNet_0.Sequential_0.Bottleneck_0.Conv2d_0, a
// TorchScript model's "Module Hierarchy" argument (with_modules=True) gives layer1.0.conv1. A
// second call in the same module gets `.<op>` appended (then `.2`, `.3`): names are unique.
// Without a hierarchy a case is named trace.<n>.<op>.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cases/case_file.h"

namespace parity {

struct TraceImport {
  std::vector<Case> cases;
  int64_t operator_events = 0;  // all operator events read
  int64_t calls = 0;            // supported calls imported (before removing duplicates)
  int64_t duplicates = 0;       // calls whose case equals an earlier one (dropped unless keep_all)
  bool module_names = false;    // some case is named from the module hierarchy
  // Calls of supported ops left out as not part of the forward pass, by part of the step:
  // "backward", "optimiser", "data loading", "after the backward began". Empty with keep_all.
  std::map<std::string, int64_t> outside_forward;
  // Calls that gave no case, by (op name, why): every call of a supported op, and the outermost
  // calls of the others (aten::batch_norm, not the aten::cudnn_batch_norm inside it).
  std::map<std::pair<std::string, std::string>, int64_t> skipped;
};

// Throws parity::Error naming the file when it is not a readable trace. keep_all: every call,
// duplicates and calls outside the forward pass too.
TraceImport import_trace(const std::string& path, bool keep_all);

// The same from the (decompressed) JSON text; `name` stands for the file in errors.
TraceImport import_trace_text(std::string_view text, const std::string& name, bool keep_all);

// `skipped` as a table, most frequent first, at most max_rows rows then one line for the rest;
// empty when nothing was skipped. Each line ends with a newline.
std::string skipped_table(const TraceImport& r, size_t max_rows = 12);

}  // namespace parity
