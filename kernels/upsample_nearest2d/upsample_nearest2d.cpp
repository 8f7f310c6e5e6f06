#include "kernels/upsample_nearest2d/upsample_nearest2d.h"

#include "core/error.h"
#include "kernels/op_line.h"
#include "kernels/op_traits.h"

namespace parity {

UpsampleNearest2dParams UpsampleNearest2dParams::parse(std::string_view line) {
  OpLine l(line, kName);
  UpsampleNearest2dParams p;
  p.x = l.shape("x");
  std::tie(p.scale_h, p.scale_w) = l.hw("scale", 0);
  l.finish();
  if (p.x.rank() != 4) throw Error("upsample_nearest2d: x must be NCHW (rank 4) (x=" + p.x.str() + ")");
  if (p.scale_h <= 0 || p.scale_w <= 0 || p.scale_h > 1024 || p.scale_w > 1024) {
    throw Error("upsample_nearest2d: scale must be an integer from 1 to 1024 (x=" + p.x.str() + ")");
  }
  p.output_shape();  // refuses an output whose element count overflows
  return p;
}

std::string UpsampleNearest2dParams::str() const {
  return OpLineWriter(kName).field("x", x).hw("scale", scale_h, scale_w, 0).str();
}

OpTraits upsample_nearest2d_traits() {
  OpTraits t = traits_for<UpsampleNearest2dParams>(unary_op(upsample_nearest2d_ref), PARITY_CUDA_OP(unary_op(upsample_nearest2d_cuda)));
  t.examples = {"upsample_nearest2d x=1x16x10x10 scale=2"};
  return t;
}

}  // namespace parity
