#include "kernels/threshold/threshold.h"

#include "kernels/op_line.h"
#include "kernels/op_traits.h"

namespace parity {

ThresholdParams ThresholdParams::parse(std::string_view line) { return parse_fields<ThresholdParams>(line); }

std::string ThresholdParams::str() const { return print_fields(*this); }

namespace {
// At half precision PyTorch compares in the type: the threshold is rounded to it first (scores
// > 0.001 in float16 is scores > 0.0010004), so the reference does the same.
OpFn threshold_op(decltype(&threshold_ref) fn) {
  return [fn](const Call& call, const std::vector<Tensor>& in) {
    ThresholdParams p = call.params<ThresholdParams>();
    p.value = round_to(float(p.value), call.half());
    check_inputs(ThresholdParams::kName, call.inputs(), in);
    return std::vector<Tensor>{fn(p, in[0])};
  };
}
}  // namespace

OpTraits threshold_traits() {
  OpTraits t = traits_for<ThresholdParams>(threshold_op(threshold_ref), PARITY_CUDA_OP(threshold_op(threshold_cuda)));
  t.examples = {"threshold x=1x100 value=0.001"};
  t.seed_input = seed_floats(0, 1);  // confidences
  return t;
}

}  // namespace parity
