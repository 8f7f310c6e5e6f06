#pragma once
// Comparing two dumps layer by layer, and bisecting where they part ways (docs/DESIGN.md,
// "Comparing").
//
// Layers pair by what they compute, in execution order (compare/layer_alignment.h: a call one
// run makes and the other does not shifts no pair). Each pair is judged by judge_layer
// (compare/judge.h): outputs A against B under the tolerance policy, and an output beyond it
// judged locally on each side's own inputs. On top of that, the dump level adds:
//   provenance  an input that no layer produced (the image, a weight) and that differs between
//               A and B is itself a finding at the layer that consumes it;
//   the call    op lines compare parsed and canonical; lines that differ only where they name
//               their inputs' shapes (a count that followed the data upstream) are the same call;
//   origins     every layer that fails its local check on either side is an origin; the first
//               in execution order is the origin of the comparison;
//   propagation a layer beyond tolerance but explained by its inputs is FAILED, propagated,
//               when an origin lies upstream of it in the dataflow (its inputs' sources), and
//               PASSED, explained, when none does; UNCHECKED likewise;
//   one side    a layer present on one side only is explained when the data it follows differs
//               (post-processing stops when no candidate passes), when what it gives reaches
//               the paired layers as the other side has it (a grid cached on that side), or
//               when it is a cast to the run's reduced precision; else structural.
#include <cstdint>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "compare/dump_reader.h"
#include "compare/judge.h"
#include "compare/row_state.h"

namespace parity {

struct CompareOptions {
  std::optional<std::regex> layers;  // only rows of layers whose name matches (every layer is judged)
  JudgeOptions judge;
};

struct LayerReport {
  std::string name, op, line;  // A's call (B's when only B has the layer)
  std::string line_b;          // B's call when it is written otherwise
  int64_t index = -1;            // in dump A (B when A lacks the layer)
  int64_t occurrence = 0;        // among layers of the same name
  RowState state = RowState::Passed;  // decide_row's: the one value every report reads
  OriginCause cause = OriginCause::None;  // origins: how
  Sides defective = Sides::None;  // origins: the side(s) not matching the judge on their own inputs
  std::string reason;             // one line
  std::string propagated_from;    // propagated rows: the origin upstream
  LayerVerdict verdict;           // outputs A against B and the local checks

  const TensorDiff* worst() const { return verdict.worst(); }
  bool origin() const { return state == RowState::Origin; }
  bool propagated() const { return state == RowState::Propagated; }
  bool explained() const { return state == RowState::Explained; }
  bool passed() const { return state == RowState::Passed || state == RowState::Explained; }
  // Another model code here, or a side's outputs of another count, shape or dtype: no
  // element-wise figures say how far apart the sides are.
  bool structural() const {
    return state == RowState::Structural ||
           (state == RowState::Origin && (cause == OriginCause::KernelShape || cause == OriginCause::Wiring));
  }
  // The state every report format writes: PASSED, FAILED, PROPAGATED, UNCHECKED or MISTRUSTED.
  std::string verdict_word() const { return row_state_word(state); }
  // The one note every report format prints for this row.
  std::string note() const;
};

// Where compare's time went: wall time of each pass over the pairs (both run on every thread),
// and thread time summed over layers (conv2d's statistical test counted apart from the rest of
// the element-wise pass; local checks by op).
struct CompareTiming {
  struct LocalChecks {
    int64_t layers = 0;
    double thread_s = 0;
  };
  double elementwise_s = 0, local_s = 0;
  double elementwise_thread_s = 0, precision_thread_s = 0;
  int64_t judged = 0;  // pairs that ran the same call
  std::map<std::string, LocalChecks> local_by_op;
};

struct CompareResult {
  std::vector<std::string> provenance;  // what differs between the two manifests, one line each
  std::vector<std::string> expected;    // differences the chosen precision accounts for, one line each
  std::vector<LayerReport> layers;      // the rows (after --layers)
  int passed = 0, failed = 0, mistrusted = 0, unchecked = 0, structural = 0, explained = 0;
  int propagated = 0;  // FAILED rows that are propagated (failed does not count them)
  int structural_origins = 0;  // structural failures that are not propagated and not explained
  int64_t origin = -1;         // index into layers of the first origin, -1 when none
  std::vector<int64_t> other_origins;
  CompareTiming timing;
};

CompareResult compare_dumps(const Dump& a, const Dump& b, const CompareOptions& o);

}  // namespace parity
