#include "compare/tolerance.h"

#include <cmath>

#include "core/stats.h"
#include "kernels/backend.h"
#include "kernels/op_traits.h"

namespace parity {

namespace {
constexpr double kU32 = 0x1p-24;

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

Tolerance tolerance_for(const Call& call, size_t index, DType dtype, const std::vector<Tensor>& inputs,
                        const PrecisionProfile& profile) {
  Tolerance t = profile_tolerance(dtype, profile);
  const OpTraits& op = call.traits();
  if (op.dot_products && index == 0) {
    const DotProducts d = op.dot_products(call, inputs);
    const double scale = conv2d_bound_scale(d.terms, profile);
    t.bound = [scale, scales = d.scales](int64_t i) { return scale * scales(i).abs_sum; };
  } else if (op.extra_atol) {
    t.atol = std::max(t.atol, op.extra_atol(call));
  }
  return t;
}

namespace {

// The sampled dot-product elements of `actual` with their scales; `expected` null: the exact
// value (float64) of each element's dot product on these inputs is the expected one.
PrecisionStats dot_product_stats(const DotProducts& d, const Tensor* expected, const Tensor& actual, const PrecisionProfile& profile) {
  // Every output channel gets its share of samples, spread over the rest of the output.
  int64_t N = 1, OHW = 1;
  for (size_t k = 0; k < d.shape.rank(); ++k) {
    if (k < d.channel_dim) N *= d.shape[k];
    if (k > d.channel_dim) OHW *= d.shape[k];
  }
  const int64_t OC = d.shape[d.channel_dim];
  const int64_t per_channel = std::max(kSamplesPerChannel, (kSamples + OC - 1) / OC);
  const std::vector<int64_t> positions = sample_indices(N * OHW, per_channel);  // the same in every channel
  const auto element = [&](int64_t q, int64_t oc) { return ((q / OHW) * OC + oc) * OHW + q % OHW; };
  // scales[p * OC + oc]: position p's channel oc.
  std::vector<DotScales> scales(positions.size() * size_t(OC));
  for (size_t k = 0; k < positions.size(); ++k) {
    if (d.across_channels) {
      d.across_channels(positions[k], &scales[k * size_t(OC)]);
      continue;
    }
    for (int64_t oc = 0; oc < OC; ++oc) scales[k * size_t(OC) + size_t(oc)] = d.scales(element(positions[k], oc));
  }
  std::vector<ReductionSample> samples;
  for (int64_t oc = 0; oc < OC; ++oc) {
    for (size_t k = 0; k < positions.size(); ++k) {
      const int64_t i = element(positions[k], oc);
      const DotScales& s = scales[k * size_t(OC) + size_t(oc)];
      const double want = expected ? element_as_double(*expected, i) : s.exact;
      samples.push_back({want, element_as_double(actual, i), s.abs_sum, std::sqrt(s.sum_sq), oc});
    }
  }
  return reduction_stats(samples, d.terms, profile);
}

}  // namespace

PrecisionStats precision_stats(const Call& call, size_t index, const std::vector<Tensor>& inputs, const Tensor& expected,
                               const Tensor& actual, const PrecisionProfile& profile) {
  if (!is_floating(expected.dtype()) || expected.dtype() != actual.dtype() || expected.shape() != actual.shape()) return {};
  const OpTraits& op = call.traits();
  if (!op.dot_products || index != 0 || inputs.empty()) return result_stats(expected, actual);
  return dot_product_stats(op.dot_products(call, inputs), &expected, actual, profile);
}

PrecisionStats own_precision_stats(const Call& call, size_t index, const std::vector<Tensor>& inputs, const Tensor& output,
                                   const PrecisionProfile& profile) {
  const OpTraits& op = call.traits();
  if (!op.dot_products || index != 0 || inputs.empty() || output.dtype() != DType::Float32) return {};
  const DotProducts d = op.dot_products(call, inputs);  // checks the inputs against the call
  if (output.shape() != d.shape) return {};
  return dot_product_stats(d, nullptr, output, profile);
}

}  // namespace parity
