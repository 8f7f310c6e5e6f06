#include "compare/row_state.h"

namespace parity {

namespace {

RowDecision one_sided(const LayerFacts& f) {
  RowDecision d;
  d.reason = "missing in " + std::string(f.only_in == "A" ? "B" : "A");
  // A value recomputed on this side, before any origin upstream: nothing downstream depends on it
  // having been computed here.
  if (!f.recomputed.empty()) {
    d.state = RowState::Explained, d.reason += " (" + f.recomputed + ")";
  } else if (!f.upstream.empty()) {
    d.state = RowState::Propagated;
  } else if (!f.steered_by.empty()) {
    d.state = RowState::Explained, d.reason += " (the control flow followed data that differs: " + f.steered_by + ")";
  } else if (!f.precision_cast.empty()) {
    d.state = RowState::Explained, d.reason += " (" + f.precision_cast + ")";
  } else {
    d.state = RowState::Structural;
  }
  return d;
}

std::string joined(const std::string& finding, const std::string& more) { return finding + (more.empty() ? "" : "; " + more); }

}  // namespace

RowDecision decide_row(const LayerFacts& f) {
  if (!f.only_in.empty()) return one_sided(f);
  RowDecision d;
  if (!f.verdict) {
    d.reason = "B ran another call: " + f.other_call;
    d.state = f.upstream.empty() ? RowState::Structural : RowState::Propagated;
    return d;
  }
  const LayerVerdict& v = *f.verdict;
  d.reason = v.reason;
  if (!f.given_input.empty()) {
    d.state = RowState::Origin, d.cause = OriginCause::GivenInput;
    d.reason = joined(f.given_input, v.reason);
  } else if (!f.copy_a.empty() || !f.copy_b.empty()) {
    d.state = RowState::Origin, d.cause = OriginCause::Copy;
    const Sides copies = f.copy_a.empty() ? Sides::B : f.copy_b.empty() ? Sides::A : Sides::Both;
    d.defective = Sides(int(copies) | int(v.defective()));
    d.reason = joined(f.copy_a + (f.copy_a.empty() || f.copy_b.empty() ? "" : "; ") + f.copy_b, v.reason);
  } else if (!f.wiring.empty()) {
    d.state = RowState::Origin, d.cause = OriginCause::Wiring;
    d.defective = v.defective();
    d.reason = joined(f.wiring, v.reason);
  } else if (v.state == State::Failed) {
    d.state = RowState::Origin, d.cause = v.structural ? OriginCause::KernelShape : OriginCause::Kernel;
    d.defective = v.defective();
  } else if ((v.explained || v.state == State::Unchecked) && !f.upstream.empty()) {
    d.state = RowState::Propagated;
  } else if (v.state == State::Unchecked) {
    d.state = RowState::Unchecked;
  } else if (v.state == State::Mistrusted) {
    d.state = RowState::Mistrusted;
  } else {
    d.state = v.explained ? RowState::Explained : RowState::Passed;
  }
  return d;
}

const char* row_state_word(RowState s) {
  switch (s) {
    case RowState::Passed:
    case RowState::Explained: return "PASSED";
    case RowState::Origin:
    case RowState::Structural: return "FAILED";
    case RowState::Propagated: return "PROPAGATED";
    case RowState::Unchecked: return "UNCHECKED";
    case RowState::Mistrusted: return "MISTRUSTED";
  }
  return "FAILED";
}

}  // namespace parity
