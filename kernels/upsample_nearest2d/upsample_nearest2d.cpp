#include "kernels/upsample_nearest2d/upsample_nearest2d.h"

#include "core/error.h"
#include "kernels/op_line.h"
#include "kernels/op_traits.h"

namespace parity {

UpsampleNearest2dParams UpsampleNearest2dParams::parse(std::string_view line) { return parse_fields<UpsampleNearest2dParams>(line); }

std::string UpsampleNearest2dParams::str() const { return print_fields(*this); }

void UpsampleNearest2dParams::validate() const {
  if (x.rank() != 4) throw Error("upsample_nearest2d: x must be NCHW (rank 4) (x=" + x.str() + ")");
  if (scale_h <= 0 || scale_w <= 0 || scale_h > 1024 || scale_w > 1024) {
    throw Error("upsample_nearest2d: scale must be an integer from 1 to 1024 (x=" + x.str() + ")");
  }
  output_shape();  // refuses an output whose element count overflows
}

OpTraits upsample_nearest2d_traits() {
  OpTraits t = traits_for<UpsampleNearest2dParams>(unary_op(upsample_nearest2d_ref), PARITY_CUDA_OP(unary_op(upsample_nearest2d_cuda)));
  t.examples = {"upsample_nearest2d x=1x16x10x10 scale=2"};
  return t;
}

}  // namespace parity
