#include <ATen/ops/conv2d.h>

#include "kernels/aten/util.h"
#include "kernels/conv2d/conv2d.h"

namespace parity {

Tensor conv2d_aten(const Conv2dParams& p, const Tensor& x, const Tensor& w, const Tensor* bias) {
  check_conv2d_inputs(p, x, w, bias);
  return aten_call(Conv2dParams::kName, [&] {
    const c10::optional<at::Tensor> b = bias ? c10::optional<at::Tensor>(to_aten(*bias)) : c10::nullopt;
    return from_aten(at::conv2d(to_aten(x), to_aten(w), b, {p.stride_h, p.stride_w}, {p.pad_h, p.pad_w},
                                {p.dil_h, p.dil_w}, p.groups));
  });
}

PARITY_ATEN_OP(Conv2dParams, conv2d_op(conv2d_aten));

// Golden data (AtenPlugin::float64): the same convolution in float64, rounded once to float32.
PARITY_ATEN_FLOAT64(Conv2dParams, bind_op<Conv2dParams>([](const Conv2dParams& p, const std::vector<Tensor>& in) {
  const c10::optional<at::Tensor> b = p.bias ? c10::optional<at::Tensor>(to_aten_float64(in[2])) : c10::nullopt;
  return std::vector<Tensor>{from_aten_float32(at::conv2d(to_aten_float64(in[0]), to_aten_float64(in[1]), b,
                                                          {p.stride_h, p.stride_w}, {p.pad_h, p.pad_w}, {p.dil_h, p.dil_w}, p.groups))};
}));

}  // namespace parity
