// Every op parity knows, in the order YOLOv5 meets them.
#include "kernels/registry.h"

#include "core/error.h"
#include "kernels/add/add.h"
#include "kernels/aten_plugin.h"
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

namespace {
// The aten implementation of `op`, from the plugin, which is loaded on the first aten call.
OpFn aten_op(const char* op) {
  return [op = std::string(op)](std::string_view line, const std::vector<Tensor>& inputs) {
    static const auto* ops = reinterpret_cast<AtenOpsFn>(aten_plugin_symbol("parity_aten_ops"))();
    const auto it = ops->find(op);
    if (it == ops->end()) throw Error("the aten plugin has no " + op);
    return it->second(line, inputs);
  };
}
// The project's CUDA kernel of an op, or none in a build without CUDA.
#ifdef PARITY_HAVE_CUDA
#define PARITY_CUDA_OP(adapter) adapter
#else
#define PARITY_CUDA_OP(adapter) nullptr
#endif
}  // namespace

const std::vector<OpEntry>& op_table() {
  static const std::vector<OpEntry> table = {
      // The network.
      op_entry_for<Conv2dParams>(conv2d_op(conv2d_ref), aten_op(Conv2dParams::kName), PARITY_CUDA_OP(conv2d_op(conv2d_cuda))),
      op_entry_for<SiluParams>(unary_op(silu_ref), aten_op(SiluParams::kName), PARITY_CUDA_OP(unary_op(silu_cuda))),
      op_entry_for<AddParams>(binary_op(add_ref), aten_op(AddParams::kName), PARITY_CUDA_OP(binary_op(add_cuda))),
      op_entry_for<CatParams>(cat_op(cat_ref), aten_op(CatParams::kName), PARITY_CUDA_OP(cat_op(cat_cuda))),
      op_entry_for<Maxpool2dParams>(unary_op(maxpool2d_ref), aten_op(Maxpool2dParams::kName), PARITY_CUDA_OP(unary_op(maxpool2d_cuda))),
      op_entry_for<UpsampleNearest2dParams>(unary_op(upsample_nearest2d_ref), aten_op(UpsampleNearest2dParams::kName),
                                             PARITY_CUDA_OP(unary_op(upsample_nearest2d_cuda))),
      op_entry_for<SigmoidParams>(unary_op(sigmoid_ref), aten_op(SigmoidParams::kName), PARITY_CUDA_OP(unary_op(sigmoid_cuda))),
      op_entry_for<DetectDecodeParams>(unary_op(detect_decode_ref), aten_op(DetectDecodeParams::kName),
                                        PARITY_CUDA_OP(unary_op(detect_decode_cuda))),
      // val.py's post-processing.
      op_entry_for<ThresholdParams>(unary_op(threshold_ref), aten_op(ThresholdParams::kName), PARITY_CUDA_OP(unary_op(threshold_cuda))),
      op_entry_for<NonzeroParams>(unary_op(nonzero_ref), aten_op(NonzeroParams::kName), PARITY_CUDA_OP(unary_op(nonzero_cuda))),
      op_entry_for<IndexParams>(index_op(index_ref), aten_op(IndexParams::kName), PARITY_CUDA_OP(index_op(index_cuda))),
      op_entry_for<MaxDimParams>(max_dim_op(max_dim_ref), aten_op(MaxDimParams::kName), PARITY_CUDA_OP(max_dim_op(max_dim_cuda))),
      op_entry_for<ArgsortParams>(unary_op(argsort_ref), aten_op(ArgsortParams::kName), PARITY_CUDA_OP(unary_op(argsort_cuda))),
      op_entry_for<NmsParams>(nms_op(nms_ref), aten_op(NmsParams::kName), PARITY_CUDA_OP(nms_op(nms_cuda))),
  };
  return table;
}

}  // namespace parity
