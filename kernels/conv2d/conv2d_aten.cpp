#include <ATen/ops/conv2d.h>

#include "kernels/aten_util.h"
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

}  // namespace parity
