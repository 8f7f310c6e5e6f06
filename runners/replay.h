#pragma once
// Replay: run each case on backend A and backend B with the same inputs and judge every output
// as compare does (compare/judge.h: tolerance, then a local check against the judge backend).
#include <cstdint>
#include <memory>
#include <string>

#include "compare/precision.h"
#include <vector>

#include "cases/case_file.h"
#include "compare/tensor_compare.h"
#include "runners/dump.h"

namespace parity {

struct Dump;

struct ReplayOptions {
  std::string backend_a = "ref", backend_b = "aten";
  std::string judge = "ref";  // runs a case whose outputs differ beyond tolerance (compare/judge.h)
  Precision precision = Precision::Fp32;  // the profile outputs are judged against (compare/precision.h)
  uint64_t seed = 0;
  std::string inputs_dir;  // when set, inputs come from .npy files (runners/inputs.h)
  std::shared_ptr<const Dump> inputs_dump;  // when set, inputs come from this dump's layers (runners/inputs.h)
};

struct CaseResult {
  State state = State::Passed;
  bool structural = false, explained = false;
  std::string reason;                   // why not a plain PASSED, one line
  double max_abs = 0, max_rel = 0;      // over all outputs
  double ms_a = 0, ms_b = 0;
  std::string bits;  // effective mantissa bits of B against A (first float output): "exact", "22.9", ""
};

// Dumps, when given, receive the case's inputs and each backend's outputs.
CaseResult replay_case(const Case& c, const ReplayOptions& o, DumpWriter* dump_a = nullptr, DumpWriter* dump_b = nullptr);

}  // namespace parity
