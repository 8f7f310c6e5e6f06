#include "compare/tolerance.h"

#include <cmath>

#include "kernels/backend.h"
#include "kernels/conv2d/conv2d.h"
#include "kernels/detect_decode/detect_decode.h"

namespace parity {

namespace {
constexpr double kU32 = 0x1p-24;

// S(i) = sum |x * w| + |b| over output element i's window, in float64.
double conv2d_abs_sum(const Conv2dParams& p, const float* x, const float* w, const float* b, int64_t i) {
  const Shape o = p.output_shape();
  const int64_t OW = o[3], OH = o[2], OC = o[1];
  const int64_t ow = i % OW, oh = (i / OW) % OH, oc = (i / (OW * OH)) % OC, n = i / (OW * OH * OC);
  const int64_t IC = p.x[1], H = p.x[2], W = p.x[3], ICg = p.w[1], KH = p.w[2], KW = p.w[3];
  const int64_t g = oc / (OC / p.groups);
  double s = b ? std::fabs(double(b[oc])) : 0.0;
  for (int64_t c = 0; c < ICg; ++c) {
    const float* plane = x + (n * IC + g * ICg + c) * H * W;
    const float* wk = w + (oc * ICg + c) * KH * KW;
    for (int64_t kh = 0; kh < KH; ++kh) {
      const int64_t ih = oh * p.stride_h - p.pad_h + kh * p.dil_h;
      if (ih < 0 || ih >= H) continue;
      for (int64_t kw = 0; kw < KW; ++kw) {
        const int64_t iw = ow * p.stride_w - p.pad_w + kw * p.dil_w;
        if (iw >= 0 && iw < W) s += std::fabs(double(plane[ih * W + iw]) * double(wk[kh * KW + kw]));
      }
    }
  }
  return s;
}
}  // namespace

Tolerance default_tolerance(DType dtype) {
  switch (dtype) {
    case DType::Float32: return {1e-5, 1.3e-6, {}};
    case DType::Float64: return {1e-7, 1e-7, {}};
    case DType::Float16: return {1e-5, 1e-3, {}};
    default: return {};
  }
}

Tolerance tolerance_for(const std::string& line, size_t index, DType dtype, const std::vector<Tensor>& inputs) {
  Tolerance t = default_tolerance(dtype);
  const std::string op = op_name_of(line);
  if (op == "conv2d" && index == 0) {
    const Conv2dParams p = Conv2dParams::parse(line);
    const double scale = double(p.reduction_length() + 2) * kU32;
    // The tensors are shared (copies of a Tensor share its storage), so the bound stays valid.
    t.bound = [p, scale, x = inputs[0], w = inputs[1], b = p.bias ? inputs[2] : Tensor()](int64_t i) {
      return scale * conv2d_abs_sum(p, x.data<float>(), w.data<float>(), b.defined() ? b.data<float>() : nullptr, i);
    };
  } else if (op == "detect_decode") {
    t.atol = std::max(t.atol, 32 * kU32 * double(DetectDecodeParams::parse(line).stride));
  }
  return t;
}

}  // namespace parity
