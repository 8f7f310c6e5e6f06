#include "kernels/add/add.h"

#include "kernels/op_traits.h"

namespace parity {

OpTraits add_traits() {
  OpTraits t = traits_for<AddParams>(binary_op(add_ref), PARITY_CUDA_OP(binary_op(add_cuda)));
  t.examples = {"add x=1x32x16x16"};
  return t;
}

}  // namespace parity
