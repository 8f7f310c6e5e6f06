#include "compare/tolerance.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/stats.h"
#include "kernels/backend.h"
#include "kernels/op_traits.h"

namespace parity {

namespace {
constexpr double kU32 = 0x1p-24;

// Whether every element of the float32 tensors among `ts` is finite (no exponent of all ones).
bool all_finite(const std::vector<Tensor>& ts) {
  for (const Tensor& t : ts) {
    if (t.dtype() != DType::Float32) continue;
    const std::byte* p = t.bytes();
    int finite = 1;
    for (int64_t i = 0; i < t.numel(); ++i) {
      uint32_t v;
      std::memcpy(&v, p + size_t(i) * 4, 4);
      finite &= int((v & 0x7f800000u) != 0x7f800000u);
    }
    if (!finite) return false;
  }
  return true;
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

Tolerance copy_tolerance(DType dtype, const PrecisionProfile& profile) {
  Tolerance t = profile_tolerance(dtype, profile);
  t.atol *= 16, t.rtol *= 16;
  return t;
}

double dot_product_bound_scale(int64_t K, const PrecisionProfile& profile, double u_sum) {
  // Inputs rounded to u_in: each product within (2 u_in + u_in^2) |x w| of the exact one.
  const double u_in = profile.input_bits < 23 ? profile.u_in() : 0.0;
  return double(K + 2) * u_sum + 2 * u_in + u_in * u_in;
}

Tolerance tolerance_for(const Call& call, size_t index, DType dtype, const std::vector<Tensor>& inputs,
                        const PrecisionProfile& profile) {
  Tolerance t = profile_tolerance(dtype, profile);
  const OpTraits& op = call.traits();
  if (op.dot_products && index == 0) {
    const DotProducts d = op.dot_products(call, inputs);
    const double scale = dot_product_bound_scale(d.terms, profile);
    // An input rounded to float16's subnormals moves by up to half their spacing whatever its size.
    const double floor_in = profile.input_floor();
    // An Inf or NaN among an element's terms makes its exact value Inf or NaN: no rounding
    // bound applies there (an infinite one would pass any two finite values), so the element
    // gets the dtype's tolerance, and finite outputs fail against the judge's non-finite one.
    // An output of another size than the call gives (a recorded line that cannot have made it)
    // gets the dtype's tolerance past the call's elements: the bound never reads past its inputs.
    t.bound = [scale, floor_in, scales = d.scales, count = d.shape.numel()](int64_t i) {
      if (i >= count) return 0.0;
      const DotScales s = scales(i);
      const double b = scale * s.abs_sum + floor_in * s.weight_abs_sum;
      return std::isfinite(b) ? b : 0.0;
    };
    // S >= |exact|, and a right side is within scale * S + f W of it (f W: subnormal inputs), so
    // min(|a|, |b|) <= (1 + scale) S + f W, and bound / min(|a|, |b|) >= scale / (1 + scale).
    t.bound_floor = scale / (1 + scale), t.floor_count = d.shape.numel();
    t.floor_holds = std::make_shared<LazyAnswer>([inputs] { return all_finite(inputs); });
  } else if (op.extra_atol) {
    t.atol = std::max(t.atol, op.extra_atol(call, profile.u_out()));
  }
  return t;
}

namespace {

// The positions (indices over the dims other than the channel) the precision test samples in
// every channel of a dot-product output, and the flat index of (position, channel).
struct DotSamples {
  int64_t OC = 0, OHW = 1;
  std::vector<int64_t> positions;
  int64_t element(int64_t q, int64_t oc) const { return ((q / OHW) * OC + oc) * OHW + q % OHW; }
};

DotSamples dot_samples(const Shape& shape, size_t channel_dim) {
  // Every output channel gets its share of samples, spread over the rest of the output.
  DotSamples s;
  int64_t N = 1;
  for (size_t k = 0; k < shape.rank(); ++k) {
    if (k < channel_dim) N *= shape[k];
    if (k > channel_dim) s.OHW *= shape[k];
  }
  s.OC = shape[channel_dim];
  const int64_t per_channel = std::max(kSamplesPerChannel, (kSamples + s.OC - 1) / s.OC);
  s.positions = sample_indices(N * s.OHW, per_channel);  // the same in every channel
  return s;
}

// The sampled dot-product elements of `actual` with their scales; `expected` null: the exact
// value (float64) of each element's dot product on these inputs is the expected one.
PrecisionStats dot_product_stats(const DotProducts& d, const ElementValues* expected, const ElementValues& actual,
                                 const PrecisionProfile& profile) {
  const DotSamples ds = dot_samples(d.shape, d.channel_dim);
  const int64_t OC = ds.OC;
  // scales[p * OC + oc]: position p's channel oc.
  std::vector<DotScales> scales(ds.positions.size() * size_t(OC));
  for (size_t k = 0; k < ds.positions.size(); ++k) {
    if (d.across_channels) {
      d.across_channels(ds.positions[k], &scales[k * size_t(OC)]);
      continue;
    }
    for (int64_t oc = 0; oc < OC; ++oc) scales[k * size_t(OC) + size_t(oc)] = d.scales(ds.element(ds.positions[k], oc));
  }
  std::vector<ReductionSample> samples;
  for (int64_t oc = 0; oc < OC; ++oc) {
    for (size_t k = 0; k < ds.positions.size(); ++k) {
      const int64_t i = ds.element(ds.positions[k], oc);
      const DotScales& s = scales[k * size_t(OC) + size_t(oc)];
      const double want = expected ? (*expected)(i) : s.exact;
      samples.push_back({want, actual(i), s.abs_sum, std::sqrt(s.sum_sq), oc, std::sqrt(s.weight_sq)});
    }
  }
  return reduction_stats(samples, d.terms, profile);
}

}  // namespace

PrecisionStats precision_stats(const Call& call, size_t index, const std::vector<Tensor>& inputs, const Tensor& expected,
                               const Tensor& actual, const PrecisionProfile& profile) {
  if (!is_floating(expected.dtype()) || expected.dtype() != actual.dtype() || expected.shape() != actual.shape()) return {};
  return precision_stats(call, index, inputs, expected.shape(), values_of(expected), values_of(actual), profile);
}

PrecisionStats precision_stats(const Call& call, size_t index, const std::vector<Tensor>& inputs, const Shape& shape,
                               const ElementValues& expected, const ElementValues& actual, const PrecisionProfile& profile) {
  const OpTraits& op = call.traits();
  if (!op.dot_products || index != 0 || inputs.empty()) return result_stats(shape.numel(), expected, actual);
  const DotProducts d = op.dot_products(call, inputs);
  if (shape != d.shape) return result_stats(shape.numel(), expected, actual);  // not what the call makes: no samples of it
  return dot_product_stats(d, &expected, actual, profile);
}

PrecisionStats own_precision_stats(const Call& call, size_t index, const std::vector<Tensor>& inputs, const Tensor& output,
                                   const PrecisionProfile& profile) {
  if (output.dtype() != DType::Float32) return {};
  return own_precision_stats(call, index, inputs, output.shape(), values_of(output), profile);
}

PrecisionStats own_precision_stats(const Call& call, size_t index, const std::vector<Tensor>& inputs, const Shape& shape,
                                   const ElementValues& output, const PrecisionProfile& profile) {
  const OpTraits& op = call.traits();
  if (!op.dot_products || index != 0 || inputs.empty()) return {};
  const DotProducts d = op.dot_products(call, inputs);  // checks the inputs against the call
  if (shape != d.shape) return {};
  return dot_product_stats(d, nullptr, output, profile);
}

std::vector<int64_t> precision_sample_elements(const Shape& shape, const DotProducts* d) {
  std::vector<int64_t> out = sample_indices(shape.numel());
  if (d && d->shape == shape) {
    const DotSamples ds = dot_samples(shape, d->channel_dim);
    for (int64_t oc = 0; oc < ds.OC; ++oc) {
      for (const int64_t q : ds.positions) out.push_back(ds.element(q, oc));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace parity
