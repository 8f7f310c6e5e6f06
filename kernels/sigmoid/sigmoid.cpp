#include "kernels/sigmoid/sigmoid.h"

#include "kernels/op_traits.h"

namespace parity {

OpTraits sigmoid_traits() {
  OpTraits t = traits_for<SigmoidParams>(unary_op(sigmoid_ref), PARITY_CUDA_OP(unary_op(sigmoid_cuda)));
  t.examples = {"sigmoid x=1x255x8x8"};
  // x over (-8, 8): both tails and the curve between.
  t.seed_input = seed_floats(-8, 8);
  return t;
}

}  // namespace parity
