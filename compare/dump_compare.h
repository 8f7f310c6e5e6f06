#pragma once
// Comparing two dumps layer by layer, and bisecting the first divergent layer.
//
// Layers are matched by name through the manifests, never by file name. Structural
// differences come first (a layer missing on one side, another op line, output count, dtype,
// shape), then values under the tolerance policy (compare/tolerance.h). Outputs whose content
// hashes match are identical and are not read. NMS keep lists that differ are classified
// (compare/nms_diff.h); explained differences do not fail the layer.
//
// Two full runs differ at every layer by rounding, and some layers amplify what they receive
// (Detect's decode, a sort), so an output beyond tolerance is judged locally before it fails:
// when its inputs are not bit-identical, the reference backend runs the layer on B's inputs,
// and if B's output matches that within tolerance the layer is consistent: it PASSES (its
// difference from A is what its inputs explain), unless an origin lies upstream, in which case
// it is FAILED, propagated from that origin.
//
// Bisect: a layer diverges when it fails its local check (B's output is not what the op gives
// on B's inputs) or its NMS keep list differs in an explained way. The origin is the first
// divergent layer whose inputs agree with A's (within tolerance); every later failing layer
// is propagated from it.
#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "compare/dump_reader.h"
#include "compare/tensor_compare.h"

namespace parity {

struct ToleranceOverride {
  double atol = 0, rtol = 0;
};

struct CompareOptions {
  std::optional<std::regex> layers;             // only layers whose name matches
  std::optional<ToleranceOverride> tolerance;   // --atol/--rtol: replaces the dtype defaults
  std::vector<std::pair<std::regex, ToleranceOverride>> per_layer;  // --tol-file: by layer name or op
};

struct TensorReport {
  std::string role;
  bool identical = false;  // equal content hashes: not read
  TensorDiff diff;
};

struct LayerReport {
  std::string name, op, params;
  int64_t index = -1;  // in dump A (or B when A lacks it)
  State state = State::Passed;
  bool structural = false, explained = false;
  std::string reason;
  std::vector<TensorReport> outputs;
  bool inputs_agree = true, inputs_identical = true;
  std::string inputs_reason;
  bool local_checked = false, local_ok = false;  // B's output against the reference on B's inputs
  // Bisect.
  bool origin = false;
  std::string propagated_from;

  // Fails on its own account: not explained by its inputs (see above).
  bool diverges() const { return (state == State::Failed && !(local_checked && local_ok)) || explained; }
  const TensorDiff* worst() const;  // the output with the largest excess, or null
};

struct CompareResult {
  std::vector<LayerReport> layers;
  int passed = 0, failed = 0, mistrusted = 0, structural = 0;
  int structural_origins = 0;  // structural failures not propagated from an origin upstream
  int64_t origin = -1;  // index into layers of the first origin, -1 when nothing diverges
  std::vector<int64_t> other_origins;
};

CompareResult compare_dumps(const Dump& a, const Dump& b, const CompareOptions& o);

// Reads the tolerance file: JSON {"<layer name or op regex>": {"atol": X, "rtol": Y}, ...}.
std::vector<std::pair<std::regex, ToleranceOverride>> read_tolerance_file(const std::string& path);

}  // namespace parity
