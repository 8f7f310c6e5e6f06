#pragma once
// One side's local check (compare/judge.h): the judge backend runs the side's own call on the
// side's own inputs, or LibTorch runs again in float64 a torch call parity has no op for, and each
// of the side's outputs must match what it gives, within the bound the call allows (with room
// for what rounding its inputs by one unit moves the result); an nms keep list or an argsort
// passes when it is another correct answer.
#include <optional>
#include <string>
#include <vector>

#include "compare/judge.h"
#include "core/half.h"
#include "kernels/aten/plugin.h"

namespace parity {

// A side's line read once: its call, or (an op parity does not know, a bad line) why not. `op`
// is the line's first word either way. A call the caller read already is taken as it is.
struct ReadCall {
  std::string op;
  std::optional<Call> call;
  std::string error;
  std::string line;  // as recorded (a torch call's arguments: its dims)
};
ReadCall read_call(const LayerSide& s);

// How one side's own kernels are judged: at `profile`; with `exact_inputs` (a half run on the
// CPU), a sum whose half CPU kernels add exact terms in float32 (parity's conv2d, and
// TorchCall::fp32_sum: oneDNN's convolutions and linear, var and std; linear only on a contiguous
// input of 2 or 3 dims, TorchCall::bias_after) gets no allowance for
// rounding inside the kernel; other ops keep the profile's allowance, as their half kernels round on the way (ATen's
// CPU bmm rounds partial sums to the type). With `autocast_to`, a call autocast runs in that type
// (TorchCall::lowp, conv2d) has its inputs rounded to it first, as autocast rounds them before the
// kernel sees them.
struct SideJudging {
  Precision profile = Precision::Fp32;
  bool exact_inputs = false;
  HalfType autocast_to = HalfType::None;
  bool float16 = false;  // the side ran in float16 (its run, its outputs, or what it held them in)
  bool inputs_rounded = false;  // its recorded inputs are its own rounded (SideRun::wider): ties there may not be its
  // LayerSide's layout of the inputs: a bias_after call sums exactly only on some (fp32_sum below).
  bool strided_inputs = false;
  size_t first_input_rank = 0;
  bool operator==(const SideJudging& o) const {
    return profile == o.profile && exact_inputs == o.exact_inputs && autocast_to == o.autocast_to && strided_inputs == o.strided_inputs &&
           first_input_rank == o.first_input_rank && float16 == o.float16 && inputs_rounded == o.inputs_rounded;
  }
};

class LocalCheck {
 public:
  // Layer `name`, whose side's line reads as `read`, judged under `o` as `how` says.
  LocalCheck(const std::string& name, const JudgeOptions& o, const SideJudging& how, const ReadCall& read);

  // Side s (`s_label`: "A" or "B") of the layer, its line the one read as `read`, on `inputs`
  // (float32 where they were float16); `recorded`: whether its inputs were recorded at all.
  // `judged`: the judge's outputs on these inputs when already at hand (the other side ran on the
  // same bytes), else filled in.
  SideCheck run(const LayerSide& s, const char* s_label, bool recorded, const std::vector<Tensor>& inputs,
                std::optional<TorchCallResult>& judged) const;

 private:
  struct OutputCheck {
    TensorDiff diff;       // the side's output against the judge's
    PrecisionStats stats;  // dot products (conv2d): the statistical test's figures
  };
  static bool ran_with_outputs(SideCheck& c, const LayerSide& s, const std::vector<Tensor>& judged);
  void within_input_rounding(const LayerSide& s, size_t k, const Call& call, const std::string& op, const Tensor& expected,
                             const std::vector<Tensor>& inputs, OutputCheck& r) const;
  static Tensor one_ulp_up(const Tensor& t);
  OutputCheck against_judge(const LayerSide& s, size_t k, const Call& call, const std::string& op, const Tensor& expected,
                            const std::vector<Tensor>& inputs) const;
  void take_output_check(SideCheck& c, const std::string& role, const OutputCheck& r, const char* s_label) const;
  std::string overflow_note(const TensorDiff& d) const;
  SideCheck torch_call_check(const LayerSide& s, const ReadCall& read, const char* s_label, const std::vector<Tensor>& inputs,
                             std::optional<TorchCallResult>& judged, const std::string& unchecked) const;
  std::string tied_indices(const LayerSide& s, const ReadCall& read, const std::vector<Tensor>& inputs,
                           const std::vector<Tensor>& judged, bool& checked) const;
  // `in_float32`: the judge ran in float32 (passes_judged_in_float32); its own error is allowed
  // for, and a failure is returned as it is, with no allowance for input rounding.
  TensorDiff against_torch(const LayerSide& s, const ReadCall& read, size_t k, const TorchCallResult& judged,
                           const std::vector<Tensor>& inputs, bool in_float32 = false) const;
  bool passes_judged_in_float32(const LayerSide& s, const ReadCall& read, const std::vector<Tensor>& inputs) const;
  TensorDiff with_numbers_rounded(const LayerSide& s, const ReadCall& read, size_t k, const std::vector<Tensor>& inputs, TensorDiff d) const;

  const std::string& name_;
  const JudgeOptions& o_;
  const ReadCall& read_;
  PrecisionProfile profile_;
  HalfType autocast_to_;
  HalfType half_;  // the side's half type, where it is judged at one
  bool float16_;
  bool inputs_rounded_;
  double u_sum_ = 0x1p-24;  // what a sum's partial sums are rounded to (half_sum: the side's type)
  double sample_unit_ = 0;  // what an interpolation's sample positions are rounded to (half_weights)
  double steps_u_ = 0;      // a normalisation's steps rounded in the type (half_steps), times S
};

}  // namespace parity
