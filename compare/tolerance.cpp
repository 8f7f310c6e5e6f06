#include "compare/tolerance.h"

#include <cmath>

#include "core/stats.h"
#include "kernels/backend.h"
#include "kernels/conv2d/conv2d.h"
#include "kernels/detect_decode/detect_decode.h"

namespace parity {

namespace {
constexpr double kU32 = 0x1p-24;

struct DotScales {
  double abs_sum = 0;  // S = sum |x * w| + |b|
  double sum_sq = 0;   // sum (x * w)^2
  double exact = 0;    // sum x * w + b (float64: the products are exact, the sum within ~K 2^-53 S)
};

// The scales of output element i's dot product over its window, in float64.
DotScales conv2d_scales(const Conv2dParams& p, const float* x, const float* w, const float* b, int64_t i) {
  const Shape o = p.output_shape();
  const int64_t OW = o[3], OH = o[2], OC = o[1];
  const int64_t ow = i % OW, oh = (i / OW) % OH, oc = (i / (OW * OH)) % OC, n = i / (OW * OH * OC);
  const int64_t IC = p.x[1], H = p.x[2], W = p.x[3], ICg = p.w[1], KH = p.w[2], KW = p.w[3];
  const int64_t g = oc / (OC / p.groups);
  DotScales s;
  s.abs_sum = b ? std::fabs(double(b[oc])) : 0.0;
  s.exact = b ? double(b[oc]) : 0.0;
  for (int64_t c = 0; c < ICg; ++c) {
    const float* plane = x + (n * IC + g * ICg + c) * H * W;
    const float* wk = w + (oc * ICg + c) * KH * KW;
    for (int64_t kh = 0; kh < KH; ++kh) {
      const int64_t ih = oh * p.stride_h - p.pad_h + kh * p.dil_h;
      if (ih < 0 || ih >= H) continue;
      for (int64_t kw = 0; kw < KW; ++kw) {
        const int64_t iw = ow * p.stride_w - p.pad_w + kw * p.dil_w;
        if (iw < 0 || iw >= W) continue;
        const double t = double(plane[ih * W + iw]) * double(wk[kh * KW + kw]);
        s.abs_sum += std::fabs(t);
        s.exact += t;
        s.sum_sq += t * t;
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

Tolerance profile_tolerance(DType dtype, const PrecisionProfile& profile) {
  if (!is_floating(dtype)) return {};
  // Outputs stored at the profile's precision: torch.testing's float16 and bfloat16 defaults.
  if (profile.id == Precision::Fp16) return {1e-5, 1e-3, {}};
  if (profile.id == Precision::Bf16) return {1e-5, 1.6e-2, {}};
  return default_tolerance(dtype);
}

double conv2d_bound_scale(int64_t K, const PrecisionProfile& profile) {
  // Inputs rounded to u_in: each product within (2 u_in + u_in^2) |x w| of the exact one.
  const double u_in = profile.input_bits < 23 ? profile.u_in() : 0.0;
  return double(K + 2) * kU32 + 2 * u_in + u_in * u_in;
}

Tolerance tolerance_for(const std::string& line, size_t index, DType dtype, const std::vector<Tensor>& inputs,
                        const PrecisionProfile& profile) {
  Tolerance t = profile_tolerance(dtype, profile);
  const std::string op = op_name_of(line);
  if (op == "conv2d" && index == 0) {
    const Conv2dParams p = Conv2dParams::parse(line);
    const double scale = conv2d_bound_scale(p.reduction_length(), profile);
    // The tensors are shared (copies of a Tensor share its storage), so the bound stays valid.
    t.bound = [p, scale, x = inputs[0], w = inputs[1], b = p.bias ? inputs[2] : Tensor()](int64_t i) {
      return scale * conv2d_scales(p, x.data<float>(), w.data<float>(), b.defined() ? b.data<float>() : nullptr, i).abs_sum;
    };
  } else if (op == "detect_decode") {
    t.atol = std::max(t.atol, 32 * kU32 * double(DetectDecodeParams::parse(line).stride));
  }
  return t;
}

namespace {

// The sampled conv2d elements of `actual` with their scales; `expected` null: the exact value
// (float64) of each element's dot product on these inputs is the expected one.
PrecisionStats conv2d_stats(const std::string& line, const std::vector<Tensor>& inputs, const Tensor* expected, const Tensor& actual,
                            const PrecisionProfile& profile) {
  const Conv2dParams p = Conv2dParams::parse(line);
  const float *x = inputs[0].data<float>(), *w = inputs[1].data<float>(), *b = p.bias ? inputs[2].data<float>() : nullptr;
  // Every output channel gets its share of samples, spread over the images and pixels.
  const Shape o = p.output_shape();
  const int64_t N = o[0], OC = o[1], OHW = o[2] * o[3];
  const int64_t per_channel = std::max(kSamplesPerChannel, (kSamples + OC - 1) / OC);
  const std::vector<int64_t> positions = sample_indices(N * OHW, per_channel);  // the same in every channel
  std::vector<ReductionSample> samples;
  for (int64_t oc = 0; oc < OC; ++oc) {
    for (const int64_t q : positions) {
      const int64_t i = ((q / OHW) * OC + oc) * OHW + q % OHW;
      const DotScales s = conv2d_scales(p, x, w, b, i);
      const double want = expected ? element_as_double(*expected, i) : s.exact;
      samples.push_back({want, element_as_double(actual, i), s.abs_sum, std::sqrt(s.sum_sq), oc});
    }
  }
  return reduction_stats(samples, p.reduction_length(), profile);
}

}  // namespace

PrecisionStats precision_stats(const std::string& line, size_t index, const std::vector<Tensor>& inputs, const Tensor& expected,
                               const Tensor& actual, const PrecisionProfile& profile) {
  if (!is_floating(expected.dtype()) || expected.dtype() != actual.dtype() || expected.shape() != actual.shape()) return {};
  if (op_name_of(line) != "conv2d" || index != 0 || inputs.empty()) return result_stats(expected, actual);
  return conv2d_stats(line, inputs, &expected, actual, profile);
}

PrecisionStats own_precision_stats(const std::string& line, size_t index, const std::vector<Tensor>& inputs, const Tensor& output,
                                   const PrecisionProfile& profile) {
  if (op_name_of(line) != "conv2d" || index != 0 || inputs.empty() || output.dtype() != DType::Float32) return {};
  check_inputs("conv2d", op_inputs(line), inputs);
  if (output.shape() != Conv2dParams::parse(line).output_shape()) return {};
  return conv2d_stats(line, inputs, nullptr, output, profile);
}

}  // namespace parity
