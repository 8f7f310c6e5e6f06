// Every op parity knows, in the order YOLOv5 meets them.
#include "kernels/registry.h"

#include "kernels/add/add.h"
#include "kernels/argsort/argsort.h"
#include "kernels/cat/cat.h"
#include "kernels/conv2d/conv2d.h"
#include "kernels/detect_decode/detect_decode.h"
#include "kernels/index/index.h"
#include "kernels/max_dim/max_dim.h"
#include "kernels/maxpool2d/maxpool2d.h"
#include "kernels/nms/nms.h"
#include "kernels/nonzero/nonzero.h"
#include "kernels/sigmoid/sigmoid.h"
#include "kernels/silu/silu.h"
#include "kernels/threshold/threshold.h"
#include "kernels/upsample_nearest2d/upsample_nearest2d.h"

namespace parity {

const std::vector<OpEntry>& op_table() {
  static const std::vector<OpEntry> table = {
      // The network.
      op_entry_for<Conv2dParams>(conv2d_op(conv2d_ref), conv2d_op(conv2d_aten)),
      op_entry_for<SiluParams>(unary_op(silu_ref), unary_op(silu_aten)),
      op_entry_for<AddParams>(binary_op(add_ref), binary_op(add_aten)),
      op_entry_for<CatParams>(cat_op(cat_ref), cat_op(cat_aten)),
      op_entry_for<Maxpool2dParams>(unary_op(maxpool2d_ref), unary_op(maxpool2d_aten)),
      op_entry_for<UpsampleNearest2dParams>(unary_op(upsample_nearest2d_ref), unary_op(upsample_nearest2d_aten)),
      op_entry_for<SigmoidParams>(unary_op(sigmoid_ref), unary_op(sigmoid_aten)),
      op_entry_for<DetectDecodeParams>(unary_op(detect_decode_ref), unary_op(detect_decode_aten)),
      // val.py's post-processing.
      op_entry_for<ThresholdParams>(unary_op(threshold_ref), unary_op(threshold_aten)),
      op_entry_for<NonzeroParams>(unary_op(nonzero_ref), unary_op(nonzero_aten)),
      op_entry_for<IndexParams>(index_op(index_ref), index_op(index_aten)),
      op_entry_for<MaxDimParams>(max_dim_op(max_dim_ref), max_dim_op(max_dim_aten)),
      op_entry_for<ArgsortParams>(unary_op(argsort_ref), unary_op(argsort_aten)),
      op_entry_for<NmsParams>(nms_op(nms_ref), nms_op(nms_aten)),
  };
  return table;
}

}  // namespace parity
