#pragma once
// A row's state, decided in one place: decide_row takes what the comparison found out about a
// layer (its verdict, the first origin upstream in the dataflow, what its inputs are and where
// they come from, whether one side alone ran it) and returns the one state every report reads
// (docs/DESIGN.md, "Comparing", has the table).
#include <string>

#include "compare/judge.h"

namespace parity {

enum class RowState {
  Passed,      // within tolerance
  Explained,   // beyond tolerance, each side matching the judge on its own inputs, no origin
               // upstream; or a layer one side alone ran that the data or the precision accounts for
  Origin,      // a side is defective here (OriginCause says how)
  Propagated,  // beyond tolerance or unchecked only because an origin upstream made its inputs differ
  Structural,  // the two runs ran other code here (another call, a layer one side alone ran), no origin upstream
  Unchecked,   // beyond tolerance, and no local check could be made
  Mistrusted,  // an output with values no comparison can trust (NaN or Inf where the other side is finite)
};

// What made a layer an origin.
enum class OriginCause {
  None,
  Kernel,      // a side does not match the judge on its own inputs
  KernelShape, // the same, in the count, shape or dtype of its outputs (structural)
  GivenInput,  // an input no layer produced (the image, a weight) differs between the runs
  Copy,        // a side's input is not its producer's output through its recorded views and copies
  Wiring,      // an input comes from another layer, or takes other elements, on one side (the model code)
};

// What the comparison knows of a layer when its row is decided. A layer ran on both sides
// (`verdict` set, or `other_call`) or on one (`only_in` "A" or "B").
struct LayerFacts {
  std::string upstream;  // the first origin upstream in the dataflow (its name), "" when none
  // Both sides:
  const LayerVerdict* verdict = nullptr;  // the judge's, when both ran the same call
  std::string other_call;                 // B's line, when B ran another call
  std::string given_input;                // an input no layer produced differs
  std::string copy_a, copy_b;             // a side's copy does not hold (InputChecks::copy_finding)
  std::string wiring;                     // rewired or inconsistent input (InputChecks)
  // One side only:
  std::string only_in;      // "A" or "B"
  std::string recomputed;   // what it gives is what the other side used (before any origin upstream)
  std::string steered_by;   // the control flow followed data that differs: the input that did
  std::string precision_cast;  // a cast to the run's reduced precision: why
};

struct RowDecision {
  RowState state = RowState::Passed;
  OriginCause cause = OriginCause::None;
  Sides defective = Sides::None;  // origins: the side(s) not matching the judge, or whose copy does not hold
  std::string reason;             // one line
};

RowDecision decide_row(const LayerFacts& f);

// The word a report writes for a state: PASSED (passed or explained), FAILED (origin or
// structural), PROPAGATED, UNCHECKED, MISTRUSTED.
const char* row_state_word(RowState s);

}  // namespace parity
