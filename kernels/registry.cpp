// Every op parity knows, in the order YOLOv5 meets them.
#include "kernels/registry.h"

#include "kernels/conv2d/conv2d.h"
#include "kernels/sigmoid/sigmoid.h"
#include "kernels/silu/silu.h"

namespace parity {

const std::vector<OpEntry>& op_table() {
  static const std::vector<OpEntry> table = {
      op_entry_for<Conv2dParams>(conv2d_op(conv2d_ref), conv2d_op(conv2d_aten)),
      op_entry_for<SiluParams>(unary_op(silu_ref), unary_op(silu_aten)),
      op_entry_for<SigmoidParams>(unary_op(sigmoid_ref), unary_op(sigmoid_aten)),
  };
  return table;
}

}  // namespace parity
