#include "runners/replay.h"

#include "compare/dump_reader.h"
#include "compare/judge.h"
#include "core/error.h"
#include "core/stopwatch.h"
#include "kernels/backend.h"
#include "runners/inputs.h"

namespace parity {

namespace {
double run_timed(const Backend& b, const Call& call, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Stopwatch watch;
  out = b.run(call, in);
  return watch.ms();
}

std::vector<DumpTensor> as_dump(const std::vector<TensorSpec>& specs, const std::vector<Tensor>& ts) {
  std::vector<DumpTensor> out;
  for (size_t i = 0; i < ts.size(); ++i) out.push_back({specs[i].name, "", ts[i]});
  return out;
}

std::vector<DumpTensor> outputs_as_dump(const std::vector<Tensor>& ts) {
  std::vector<DumpTensor> out;
  for (size_t i = 0; i < ts.size(); ++i) out.push_back({output_role(i), "", ts[i]});
  return out;
}
}  // namespace

CaseResult replay_case(const Case& c, const ReplayOptions& o, DumpWriter* dump_a, DumpWriter* dump_b) {
  CaseResult r;
  const Backend &a = backend(o.backend_a), &b = backend(o.backend_b);
  const Call call(c.line);  // read once: everything below takes the call
  const std::string& op = call.op();
  for (const Backend* be : {&a, &b}) {
    if (const std::string why = be->unavailable_reason(); !why.empty()) {
      r.state = State::Skipped;
      r.reason = be->name() + ": " + why;
      return r;
    }
  }
  for (const Backend* be : {&a, &b}) {
    if (!be->supports(op)) {
      r.state = State::Unsupported;
      r.reason = "backend " + be->name() + " has no " + op;
      return r;
    }
  }
  const DumpLayer* recorded = nullptr;
  if (o.inputs_dump) {
    // A case the dump did not run has no inputs to replay: said, not an error of the run.
    recorded = dump_layer_for(c.name, call, *o.inputs_dump, r.reason);
    if (!recorded) {
      r.state = State::Skipped;
      return r;
    }
  }
  std::vector<Tensor> in = recorded               ? inputs_from_dump(call, *o.inputs_dump, *recorded)
                           : o.inputs_dir.empty() ? seeded_inputs(c, call, o.seed)
                                                  : inputs_from_folder(c.name, call, o.inputs_dir);
  round_floats(in, call.half());  // inputs read from files become values of a half call's type, as seeded ones are
  std::vector<Tensor> out_a, out_b;
  // A backend without a kernel for a half call's type (LibTorch's CPU has no float16 convolution)
  // makes the case UNSUPPORTED; for a float32 call that is a failure like any other.
  const bool half = call.half() != HalfType::None;
  try {
    r.ms_a = run_timed(a, call, in, out_a);  // another error here is the case's own: it propagates
  } catch (const Unsupported& e) {
    if (!half) throw;
    r.state = State::Unsupported, r.reason = e.what();
    return r;
  }
  try {
    r.ms_b = run_timed(b, call, in, out_b);
  } catch (const Unsupported& e) {
    if (!half) {
      r.state = State::Failed, r.structural = true, r.reason = b.name() + " failed where " + a.name() + " ran: " + e.what();
      return r;
    }
    r.state = State::Unsupported, r.reason = e.what();
    return r;
  } catch (const Error& e) {
    r.state = State::Failed;
    r.structural = true;
    r.reason = b.name() + " failed where " + a.name() + " ran: " + e.what();
    return r;
  }
  const std::vector<TensorSpec>& specs = call.inputs();
  if (dump_a) dump_a->add_layer(c.name, c.line, r.ms_a, as_dump(specs, in), outputs_as_dump(out_a));
  if (dump_b) dump_b->add_layer(c.name, c.line, r.ms_b, as_dump(specs, in), outputs_as_dump(out_b));
  auto side = [&](std::vector<Tensor> out) {
    LayerSide s;
    s.line = c.line, s.call = std::make_shared<const Call>(call);
    for (size_t k = 0; k < out.size(); ++k) s.roles.push_back(output_role(k));
    s.outputs = std::move(out);
    s.inputs = [&in] { return in; };
    return s;
  };
  LayerSide sa = side(out_a), sb = side(out_b);
  if (a.name() == o.judge) sa.judged = out_a;  // the judge on these inputs: already run
  JudgeOptions jo;
  jo.judge = o.judge;
  jo.precision = o.precision;
  const LayerVerdict v = judge_layer(c.name, sa, sb, true, jo);
  if (const PrecisionStats* st = v.precision_stats()) r.bits = st->cell();
  for (const OutputVerdict& t : v.outputs) r.max_abs = std::max(r.max_abs, t.diff.max_abs), r.max_rel = std::max(r.max_rel, t.diff.max_rel);
  r.state = v.state, r.structural = v.structural, r.explained = v.explained, r.reason = v.reason;
  if (v.state == State::Failed) r.reason = std::string("defective: ") + sides_name(v.defective()) + ": " + v.reason;
  return r;
}

}  // namespace parity
