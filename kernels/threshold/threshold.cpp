#include "kernels/threshold/threshold.h"

#include "kernels/op_line.h"
#include "kernels/op_traits.h"

namespace parity {

ThresholdParams ThresholdParams::parse(std::string_view line) {
  OpLine l(line, kName);
  ThresholdParams p;
  p.x = l.shape("x");
  p.value = l.real("value");
  l.finish();
  return p;
}

std::string ThresholdParams::str() const { return OpLineWriter(kName).field("x", x).real("value", value).str(); }

OpTraits threshold_traits() {
  OpTraits t = traits_for<ThresholdParams>(unary_op(threshold_ref), PARITY_CUDA_OP(unary_op(threshold_cuda)));
  t.examples = {"threshold x=1x100 value=0.001"};
  t.seed_input = seed_floats(0, 1);  // confidences
  return t;
}

}  // namespace parity
