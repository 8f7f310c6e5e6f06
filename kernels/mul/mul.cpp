#include "kernels/mul/mul.h"

#include "kernels/op_traits.h"

namespace parity {

OpTraits mul_traits() {
  OpTraits t = traits_for<MulParams>(binary_op(mul_ref), PARITY_CUDA_OP(binary_op(mul_cuda)));
  t.examples = {"mul x=1x255x8x8", "mul x=17x19 dtype=int64"};
  return t;
}

}  // namespace parity
