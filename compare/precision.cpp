#include "compare/precision.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/error.h"
#include "core/half.h"
#include "core/stats.h"

namespace parity {

namespace {

const PrecisionProfile kProfiles[] = {
    {Precision::Fp32, "fp32", 23, 23, 0},
    {Precision::Tf32, "tf32", 10, 23, 0},
    {Precision::Fp16, "fp16", 10, 10, 0x1p-24},
    {Precision::Bf16, "bf16", 7, 7, 0},
};

constexpr double kU32 = 0x1p-24;

std::string fixed1(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

}  // namespace

double PrecisionProfile::u_in() const { return std::ldexp(1.0, -(input_bits + 1)); }
double PrecisionProfile::u_out() const { return std::ldexp(1.0, -(output_bits + 1)); }

const PrecisionProfile& precision_profile(Precision p) { return kProfiles[int(p)]; }

Precision parse_precision(const std::string& name) {
  for (const PrecisionProfile& p : kProfiles) {
    if (name == p.name) return p.id;
  }
  throw Error("--precision: unknown profile '" + name + "' (known: fp32 tf32 fp16 bf16)");
}

Precision coarser(Precision a, Precision b) {
  const PrecisionProfile &pa = precision_profile(a), &pb = precision_profile(b);
  if (pa.input_bits != pb.input_bits) return pa.input_bits < pb.input_bits ? a : b;
  return pa.output_bits <= pb.output_bits ? a : b;
}

Precision precision_of(DType dtype) { return dtype == DType::Float16 ? Precision::Fp16 : Precision::Fp32; }

std::string PrecisionStats::looks_like() const {
  if (exact || samples == 0) return "";
  if (bits >= 20) return "float32";
  if (bits >= 8.5 && bits < 12) return "TF32 or float16";
  if (bits >= 5.5 && bits < 8.5) return "bfloat16";
  return "";
}

Precision precision_of(HalfType half) {
  return half == HalfType::Fp16 ? Precision::Fp16 : half == HalfType::Bf16 ? Precision::Bf16 : Precision::Fp32;
}

HalfType half_of(Precision p) { return p == Precision::Fp16 ? HalfType::Fp16 : p == Precision::Bf16 ? HalfType::Bf16 : HalfType::None; }

bool is_rounded(const Tensor& fine, const Tensor& coarse, Precision p) {
  const auto round = [p](float v) {
    switch (p) {
      case Precision::Fp16: return half_to_float(float_to_half(v));
      case Precision::Bf16: return round_mantissa(v, 7);
      case Precision::Tf32: return round_mantissa(v, 10);
      case Precision::Fp32: break;
    }
    return v;
  };
  if (fine.numel() != coarse.numel()) return false;
  for (int64_t i = 0; i < fine.numel(); ++i) {
    const float f = float(element_as_double(fine, i)), c = float(element_as_double(coarse, i));
    if (float_bits(round(f)) != float_bits(c) && float_bits(f) != float_bits(c)) return false;
  }
  return true;
}

namespace {
// Half a unit in the last place of `v` in the type of profile p (its exponent range: float16's
// subnormals below 2^-14, float32's for bf16 and tf32).
double half_ulp(double v, Precision p) {
  const int bits = p == Precision::Fp16 ? 10 : p == Precision::Bf16 ? 7 : p == Precision::Tf32 ? 10 : 23;
  const int min_exp = p == Precision::Fp16 ? -14 : -126;
  int e = min_exp + 1;  // 0: the subnormal step
  if (v != 0) std::frexp(v, &e);  // v = m 2^e, m in [0.5, 1): its leading bit is 2^(e-1)
  return std::ldexp(0.5, std::max(e - 1, min_exp) - bits);
}
}  // namespace

bool is_co_rounded(const Tensor& a, Precision pa, const Tensor& b, Precision pb) {
  if (a.numel() != b.numel()) return false;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = element_as_double(a, i), y = element_as_double(b, i);
    if (x == y) continue;
    if (!std::isfinite(x) || !std::isfinite(y) || std::fabs(x - y) > half_ulp(x, pa) + half_ulp(y, pb)) return false;
  }
  return true;
}

std::string PrecisionStats::cell() const {
  if (samples == 0) return "";
  return exact ? "exact" : fixed1(bits);
}

PrecisionStats reduction_stats(const std::vector<ReductionSample>& samples, int64_t K, const PrecisionProfile& profile) {
  PrecisionStats st;
  st.tested = true;
  const double u_in = profile.input_bits < 23 ? profile.u_in() : 0.0, u_out = profile.u_out();
  const double floor = profile.subnormal_spacing / 2;  // an output's rounding error near 0
  const double floor_in = profile.input_floor();
  double sum_ratio2 = 0, sum_e2 = 0, sum_scale2 = 0;
  int64_t n_ratio = 0;
  std::map<int64_t, std::pair<double, int64_t>> by_channel;  // sum of (e/σ)², count
  for (const ReductionSample& s : samples) {
    if (!std::isfinite(s.expected) || !std::isfinite(s.actual)) continue;  // the element-wise check reports those
    const double e = std::fabs(s.actual - s.expected);
    if (e != 0) st.exact = false;
    const double var = 2 * ((2.0 / 3) * u_in * u_in * s.rss * s.rss + (1.0 / 3) * kU32 * kU32 * s.rss * s.rss +
                            (1.0 / 9) * kU32 * kU32 * double(K) * s.abs_sum * s.abs_sum +
                            (1.0 / 3) * u_out * u_out * s.expected * s.expected + (1.0 / 3) * floor * floor +
                            (1.0 / 3) * floor_in * floor_in * s.weight_rss * s.weight_rss);
    if (var > 0) {
      sum_ratio2 += e * e / var, ++n_ratio;
      auto& [sum, count] = by_channel[s.channel];
      sum += e * e / var, ++count;
    }
    sum_e2 += e * e, sum_scale2 += (2.0 / 3) * s.rss * s.rss;
  }
  st.samples = n_ratio;
  st.rms_ratio = n_ratio ? std::sqrt(sum_ratio2 / double(n_ratio)) : 0;
  for (const auto& [channel, sc] : by_channel) {
    const double r = std::sqrt(sc.first / double(sc.second));
    if (r > st.channel_ratio) st.channel_ratio = r, st.worst_channel = channel;
  }
  st.failed = st.rms_ratio > kRmsThreshold || st.channel_ratio > kChannelRmsThreshold;
  // e ≈ 2^-(p+1) · sqrt(2/3) · Q for inputs rounded to p bits, so p = -log2(‖e‖ / ‖sqrt(2/3) Q‖) - 1:
  // norm-wise, so that elements near zero (cancellation) do not dominate.
  st.bits = (sum_e2 > 0 && sum_scale2 > 0) ? -std::log2(std::sqrt(sum_e2 / sum_scale2)) - 1 : 52;
  return st;
}

std::vector<int64_t> sample_indices(int64_t n, int64_t m) {
  std::vector<int64_t> out;
  if (n <= 0) return out;
  const int64_t k = std::min(n, m);
  out.reserve(size_t(k));
  // An odd offset within each stride, so that samples do not all fall on column 0 of a row.
  for (int64_t j = 0; j < k; ++j) out.push_back(std::min(n - 1, (j * n) / k + ((n / k) * 7 / 13)));
  return out;
}

ElementValues values_of(const Tensor& t) {
  return [t](int64_t i) { return element_as_double(t, i); };
}

PrecisionStats result_stats(const Tensor& expected, const Tensor& actual) {
  return result_stats(expected.numel(), values_of(expected), values_of(actual));
}

PrecisionStats result_stats(int64_t n, const ElementValues& expected, const ElementValues& actual) {
  PrecisionStats st;
  double sum_e2 = 0, sum_y2 = 0;
  for (const int64_t i : sample_indices(n)) {
    const double y = expected(i), z = actual(i);
    if (!std::isfinite(y) || !std::isfinite(z)) continue;
    const double e = std::fabs(z - y);
    if (e != 0) st.exact = false;
    sum_e2 += e * e, sum_y2 += y * y;
    ++st.samples;
  }
  // A result rounded to p bits is off by up to 2^-(p+1)·|y|, uniformly: rms 2^-(p+1)·|y|/sqrt(3).
  // Norm-wise, so that results near zero do not dominate.
  st.bits = (sum_e2 > 0 && sum_y2 > 0) ? -std::log2(std::sqrt(3 * sum_e2 / sum_y2)) - 1 : 52;
  return st;
}

std::string precision_failure_note(const PrecisionStats& s, const PrecisionProfile& profile) {
  std::string note;
  if (s.rms_ratio <= kRmsThreshold) {
    note = "errors in channel " + std::to_string(s.worst_channel) + " " + fixed1(s.channel_ratio) +
           "× (rms over its sampled elements) what " + profile.name + " arithmetic gives (" + fixed1(s.rms_ratio) +
           "× over all " + std::to_string(s.samples) + ")";
    return note;
  }
  note = "errors " + fixed1(s.rms_ratio) + "× (rms over " + std::to_string(s.samples) + " sampled elements) what " + profile.name +
         " arithmetic gives";
  const std::string hint = reduced_precision_hint(s, profile);
  return note + (hint.empty() ? ", effective precision ≈ " + fixed1(s.bits) + " bits" : ", " + hint);
}

std::string reduced_precision_hint(const PrecisionStats& s, const PrecisionProfile& profile) {
  // Outputs stored at the profile's precision carry its rounding whatever the inputs were.
  if (s.samples == 0 || s.exact || s.bits >= std::min(profile.input_bits, profile.output_bits) - 3) return "";
  // Rounding at a coarser precision spreads over every channel; errors that concentrate in one
  // channel are a defect there (a bias, a dropped term), whatever bits the layer averages to.
  if (s.tested && s.worst_channel >= 0 && s.channel_ratio > kConcentration * s.rms_ratio) {
    return "errors concentrate in channel " + std::to_string(s.worst_channel) + " (" + fixed1(s.channel_ratio) + "× there, " +
           fixed1(s.rms_ratio) + "× over the layer): not reduced precision";
  }
  const std::string like = s.looks_like(), bits = "effective precision ≈ " + fixed1(s.bits) + " bits";
  if (like == "TF32 or float16") {
    return bits + ": consistent with TF32 inputs (torch.backends.cudnn.allow_tf32 / torch.backends.cuda.matmul.allow_tf32) or "
                  "float16; --precision tf32 judges against TF32";
  }
  if (like == "bfloat16") return bits + ": consistent with bfloat16 inputs; --precision bf16 judges against bfloat16";
  return "";
}

}  // namespace parity
