#include "kernels/conv2d/conv2d.h"

#include "core/error.h"
#include "kernels/op_line.h"

namespace parity {

Conv2dParams Conv2dParams::parse(std::string_view line) {
  OpLine l(line, kName);
  Conv2dParams p;
  p.x = l.shape("x");
  p.w = l.shape("w");
  p.bias = l.flag("bias");
  std::tie(p.stride_h, p.stride_w) = l.hw("stride", 1);
  std::tie(p.pad_h, p.pad_w) = l.hw("pad", 0);
  std::tie(p.dil_h, p.dil_w) = l.hw("dilation", 1);
  p.groups = l.integer("groups", 1);
  l.finish();
  p.validate();
  return p;
}

std::string Conv2dParams::str() const {
  return OpLineWriter(kName)
      .field("x", x)
      .field("w", w)
      .flag("bias", bias)
      .hw("stride", stride_h, stride_w, 1)
      .hw("pad", pad_h, pad_w, 0)
      .hw("dilation", dil_h, dil_w, 1)
      .hw("groups", groups, groups, 1)
      .str();
}

void Conv2dParams::validate() const {
  const std::string shapes = "x=" + x.str() + " w=" + w.str();
  auto fail = [&](const std::string& what) { throw Error("conv2d: " + what + " (" + shapes + ")"); };
  if (x.rank() != 4) fail("x must be NCHW (rank 4)");
  if (w.rank() != 4) fail("w must be [OC, IC/groups, KH, KW] (rank 4)");
  if (stride_h <= 0 || stride_w <= 0) fail("stride must be positive");
  if (pad_h < 0 || pad_w < 0) fail("padding must be non-negative");
  if (dil_h <= 0 || dil_w <= 0) fail("dilation must be positive");
  if (groups <= 0) fail("groups must be positive");
  if (x[1] % groups != 0 || w[0] % groups != 0) fail("channels are not divisible by groups=" + std::to_string(groups));
  if (w[1] * groups != x[1]) {
    fail("channel mismatch: x has " + std::to_string(x[1]) + " channels, w expects " + std::to_string(w[1]) +
         " x groups=" + std::to_string(groups));
  }
  if (w[2] <= 0 || w[3] <= 0) fail("kernel size must be positive");
  const int64_t eh = x[2] + 2 * pad_h - dil_h * (w[2] - 1), ew = x[3] + 2 * pad_w - dil_w * (w[3] - 1);
  if (eh <= 0 || ew <= 0) fail("padded input is smaller than the dilated kernel");
}

Shape Conv2dParams::output_shape() const {
  const int64_t oh = (x[2] + 2 * pad_h - dil_h * (w[2] - 1) - 1) / stride_h + 1;
  const int64_t ow = (x[3] + 2 * pad_w - dil_w * (w[3] - 1) - 1) / stride_w + 1;
  return Shape{x[0], w[0], oh, ow};
}

std::vector<TensorSpec> Conv2dParams::inputs() const {
  std::vector<TensorSpec> in = {{"x", DType::Float32, x}, {"w", DType::Float32, w}};
  if (bias) in.push_back({"b", DType::Float32, Shape{w[0]}});
  return in;
}

void check_conv2d_inputs(const Conv2dParams& p, const Tensor& x, const Tensor& w, const Tensor* bias) {
  check_inputs(Conv2dParams::kName, p.inputs(), bias ? std::vector<Tensor>{x, w, *bias} : std::vector<Tensor>{x, w});
}

OpFn conv2d_op(decltype(&conv2d_ref) fn) {
  return bind_op<Conv2dParams>([fn](const Conv2dParams& p, const std::vector<Tensor>& in) {
    return std::vector<Tensor>{fn(p, in[0], in[1], p.bias ? &in[2] : nullptr)};
  });
}

}  // namespace parity
