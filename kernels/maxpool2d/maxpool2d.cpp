#include "kernels/maxpool2d/maxpool2d.h"

#include "core/error.h"
#include "kernels/op_line.h"
#include "kernels/op_traits.h"

namespace parity {

namespace {
// torch's pooling_output_shape: floor or ceil of the window count; in ceil mode the last
// window must start inside the input or its left padding.
int64_t pooled_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil) {
  const int64_t span = in + 2 * pad - dil * (k - 1) - 1;
  int64_t out = (span + (ceil ? stride - 1 : 0)) / stride + 1;
  if (ceil && (out - 1) * stride >= in + pad) --out;
  return out;
}
}  // namespace

Maxpool2dParams Maxpool2dParams::parse(std::string_view line) { return parse_fields<Maxpool2dParams>(line); }

std::string Maxpool2dParams::str() const { return print_fields(*this); }

void Maxpool2dParams::validate() const {
  auto fail = [&](const std::string& what) { throw Error("maxpool2d: " + what + " (x=" + x.str() + ")"); };
  if (x.rank() != 4) fail("x must be NCHW (rank 4)");
  if (k_h <= 0 || k_w <= 0) fail("kernel size k must be positive");
  if (stride_h <= 0 || stride_w <= 0) fail("stride must be positive");
  if (dil_h <= 0 || dil_w <= 0) fail("dilation must be positive");
  if (pad_h < 0 || pad_w < 0 || 2 * pad_h > k_h || 2 * pad_w > k_w) fail("padding must be between 0 and half the kernel");
  const Shape o = output_shape();
  if (o[2] <= 0 || o[3] <= 0) fail("output would be empty: the window does not fit");
}

Shape Maxpool2dParams::output_shape() const {
  return Shape{x[0], x[1], pooled_size(x[2], k_h, pad_h, stride_h, dil_h, ceil),
               pooled_size(x[3], k_w, pad_w, stride_w, dil_w, ceil)};
}

OpTraits maxpool2d_traits() {
  OpTraits t = traits_for<Maxpool2dParams>(unary_op(maxpool2d_ref), PARITY_CUDA_OP(unary_op(maxpool2d_cuda)));
  t.examples = {"maxpool2d x=1x32x20x20 k=5 stride=1 pad=2"};
  return t;
}

}  // namespace parity
