// decide_row: the one function that gives a comparison row its state, branch by branch, and
// the rules every combination of facts keeps.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "compare/dump_compare.h"
#include "compare/row_state.h"

namespace parity {
namespace {

LayerVerdict verdict(State state, bool explained = false, Sides bad = Sides::None, bool structural = false) {
  LayerVerdict v;
  v.state = state;
  v.explained = explained;
  v.differs = state != State::Passed || explained;
  v.structural = structural;
  v.reason = "why";
  for (auto [side, check] : {std::pair{Sides::A, &v.a}, std::pair{Sides::B, &v.b}}) {
    check->ran = true;
    check->ok = (int(bad) & int(side)) == 0;
  }
  return v;
}

LayerReport report_of(const LayerFacts& f) {
  LayerReport r;
  const RowDecision d = decide_row(f);
  r.state = d.state, r.cause = d.cause, r.defective = d.defective, r.reason = d.reason;
  return r;
}

TEST(RowState, OneSidedLayers) {
  LayerFacts f;
  f.only_in = "A";
  EXPECT_EQ(decide_row(f).state, RowState::Structural);
  EXPECT_EQ(decide_row(f).reason, "missing in B");
  f.precision_cast = "a cast";
  EXPECT_EQ(decide_row(f).state, RowState::Explained);
  EXPECT_EQ(decide_row(f).reason, "missing in B (a cast)");
  f.steered_by = "nms:out0";
  EXPECT_EQ(decide_row(f).reason, "missing in B (the control flow followed data that differs: nms:out0)");
  f.upstream = "model.1.conv";
  EXPECT_EQ(decide_row(f).state, RowState::Propagated);  // an origin upstream comes before the excuses
  f.recomputed = "a cached grid";
  EXPECT_EQ(decide_row(f).state, RowState::Explained);  // ...but not before a value the other side took as given
  f.only_in = "B";
  EXPECT_EQ(decide_row(f).reason, "missing in A (a cached grid)");
}

TEST(RowState, AnotherCall) {
  LayerFacts f;
  f.other_call = "silu x=1x2";
  EXPECT_EQ(decide_row(f).state, RowState::Structural);
  EXPECT_EQ(decide_row(f).reason, "B ran another call: silu x=1x2");
  f.upstream = "stem";
  EXPECT_EQ(decide_row(f).state, RowState::Propagated);
}

TEST(RowState, VerdictAlone) {
  LayerFacts f;
  const LayerVerdict passed = verdict(State::Passed), explained = verdict(State::Passed, true), unchecked = verdict(State::Unchecked),
                     mistrusted = verdict(State::Mistrusted), failed = verdict(State::Failed, false, Sides::B),
                     shape = verdict(State::Failed, false, Sides::A, true);
  const std::pair<const LayerVerdict*, RowState> cases[] = {{&passed, RowState::Passed},         {&explained, RowState::Explained},
                                                           {&unchecked, RowState::Unchecked},   {&mistrusted, RowState::Mistrusted},
                                                           {&failed, RowState::Origin},         {&shape, RowState::Origin}};
  for (const auto& [v, state] : cases) {
    f.verdict = v;
    EXPECT_EQ(decide_row(f).state, state) << row_state_word(state);
  }
  f.verdict = &failed;
  EXPECT_EQ(decide_row(f).defective, Sides::B);
  EXPECT_FALSE(report_of(f).structural());
  f.verdict = &shape;
  EXPECT_EQ(decide_row(f).cause, OriginCause::KernelShape);
  EXPECT_TRUE(report_of(f).structural());
  // An origin upstream: explained and unchecked layers carry it; a failing one is an origin of its own.
  f.upstream = "stem";
  for (const LayerVerdict* v : {&explained, &unchecked}) {
    f.verdict = v;
    EXPECT_EQ(decide_row(f).state, RowState::Propagated);
  }
  f.verdict = &failed;
  EXPECT_EQ(decide_row(f).state, RowState::Origin);
}

TEST(RowState, InputFindingsComeFirst) {
  const LayerVerdict failed = verdict(State::Failed, false, Sides::A), explained = verdict(State::Passed, true);
  LayerFacts f;
  f.verdict = &explained;
  f.wiring = "input in1 comes from another layer";
  RowDecision d = decide_row(f);
  EXPECT_EQ(d.cause, OriginCause::Wiring);
  EXPECT_EQ(d.defective, Sides::None);
  EXPECT_EQ(d.reason, "input in1 comes from another layer; why");
  f.copy_b = "B's input in0 is not stem:out0";
  d = decide_row(f);
  EXPECT_EQ(d.cause, OriginCause::Copy);
  EXPECT_EQ(d.defective, Sides::B);
  f.verdict = &failed;  // A's kernel fails too: both named
  EXPECT_EQ(decide_row(f).defective, Sides::Both);
  f.given_input = "input x differs and no layer produced it";
  d = decide_row(f);
  EXPECT_EQ(d.cause, OriginCause::GivenInput);
  EXPECT_EQ(d.defective, Sides::None);
  EXPECT_EQ(report_of(f).verdict_word(), "FAILED");
}

// Whatever the facts: an origin names what made it one; a row propagates only from an origin
// upstream; structural rows have none upstream; each state has one word.
RC_GTEST_PROP(RowState, RulesHoldForAnyFacts, ()) {
  const State states[] = {State::Passed, State::Failed, State::Unchecked, State::Mistrusted};
  const State vs = *rc::gen::elementOf(std::vector<State>(std::begin(states), std::end(states)));
  const bool explained = vs == State::Passed && *rc::gen::arbitrary<bool>();
  const Sides bad = vs == State::Failed ? *rc::gen::element(Sides::A, Sides::B, Sides::Both) : Sides::None;
  const LayerVerdict v = verdict(vs, explained, bad, vs == State::Failed && *rc::gen::arbitrary<bool>());
  const auto maybe = [](const char* text) { return *rc::gen::arbitrary<bool>() ? std::string(text) : std::string(); };
  LayerFacts f;
  f.upstream = maybe("up");
  const int kind = *rc::gen::inRange(0, 3);  // one side only, another call, the same call
  if (kind == 0) {
    f.only_in = *rc::gen::element(std::string("A"), std::string("B"));
    f.recomputed = maybe("grid"), f.steered_by = maybe("nms:out0"), f.precision_cast = maybe("cast");
  } else if (kind == 1) {
    f.other_call = "silu x=2";
  } else {
    f.verdict = &v;
    f.given_input = maybe("given"), f.copy_a = maybe("copy a"), f.copy_b = maybe("copy b"), f.wiring = maybe("wiring");
  }
  const LayerReport r = report_of(f);
  const bool finding = kind == 2 && (!f.given_input.empty() || !f.copy_a.empty() || !f.copy_b.empty() || !f.wiring.empty() ||
                                     vs == State::Failed);
  RC_ASSERT(r.origin() == finding);
  RC_ASSERT((r.cause != OriginCause::None) == r.origin());
  if (r.propagated()) RC_ASSERT(!f.upstream.empty());
  if (r.state == RowState::Structural) RC_ASSERT(f.upstream.empty());
  if (r.defective != Sides::None) RC_ASSERT(r.origin());
  RC_ASSERT(r.passed() == (r.verdict_word() == "PASSED"));
  RC_ASSERT(!r.reason.empty() || (kind == 2 && r.passed()));
}

}  // namespace
}  // namespace parity
