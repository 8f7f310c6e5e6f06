// Built with -ffp-contract=off: a float32 a * b + c here is two roundings unless std::fma says
// otherwise, so each variant is the arithmetic it names.
#include "conv_variants.h"

#include <cmath>
#include <cstring>
#include <regex>
#include <stdexcept>

#include "compare/tolerance.h"
#include "core/half.h"

namespace parity::test {

namespace {

uint64_t mix(uint64_t z) {  // splitmix64's finaliser
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Uniform in (0, 1) for (seed, tensor, index).
double uniform(uint64_t seed, uint64_t tensor, uint64_t index) {
  return (double(mix(mix(seed * 0x100000001b3ull + tensor) ^ index) >> 11) + 0.5) * 0x1p-53;
}

double normal(uint64_t seed, uint64_t tensor, uint64_t index) {  // Box-Muller
  const double u1 = uniform(seed, tensor, 2 * index), u2 = uniform(seed, tensor, 2 * index + 1);
  return std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

float input_value(Data d, const ConvShape& s, uint64_t seed, int64_t flat) {
  if (d == Data::SameSign) return float(uniform(seed, 1, uint64_t(flat)));
  if (s.IC == 3) return float(uniform(seed, 1, uint64_t(flat)));  // the image
  const double z = normal(seed, 1, uint64_t(flat));
  return float(z / (1 + std::exp(-z)));  // SiLU
}

float weight_value(Data d, const ConvShape& s, uint64_t seed, int64_t flat) {
  if (d == Data::SameSign) return float(uniform(seed, 2, uint64_t(flat)) * 2 / double(s.K()));
  return float(normal(seed, 2, uint64_t(flat)) * std::sqrt(2.0 / double(s.K())));
}

float bias_value(Data d, uint64_t seed, int64_t oc) {
  if (d == Data::SameSign) return float(uniform(seed, 3, uint64_t(oc)) * 0.1);
  return float(normal(seed, 3, uint64_t(oc)) * 0.1);
}

// Round to nearest even at `bits` explicit mantissa bits (float32's exponent range).
float round_bits(float f, int bits) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const int drop = 23 - bits;
  const uint32_t half = 1u << (drop - 1), odd = (u >> drop) & 1u;
  u = (u + half - 1 + odd) & ~((1u << drop) - 1);
  std::memcpy(&f, &u, 4);
  return f;
}

float round_half(float f) { return half_to_float(float_to_half(f)); }

float blocked16(const std::vector<float>& x, const std::vector<float>& w, float bias) {
  float lane[16] = {};
  for (size_t k = 0; k < x.size(); ++k) lane[k % 16] = std::fma(x[k], w[k], lane[k % 16]);
  float acc = 0;
  for (float l : lane) acc += l;
  return acc + bias;
}

float pairwise(const float* p, size_t n) {
  if (n == 1) return p[0];
  if (n == 0) return 0;
  return pairwise(p, n / 2) + pairwise(p + n / 2, n - n / 2);
}

double variant_value(Variant v, const std::vector<float>& x, const std::vector<float>& w, float bias, bool bias_defect) {
  const size_t K = x.size();
  switch (v) {
    case Variant::Sequential: {
      float acc = bias;
      for (size_t k = 0; k < K; ++k) {
        const float p = x[k] * w[k];
        acc = acc + p;
      }
      return acc;
    }
    case Variant::SequentialFma: {
      float acc = bias;
      for (size_t k = 0; k < K; ++k) acc = std::fma(x[k], w[k], acc);
      return acc;
    }
    case Variant::Pairwise: {
      std::vector<float> p(K);
      for (size_t k = 0; k < K; ++k) p[k] = x[k] * w[k];
      return pairwise(p.data(), K) + bias;
    }
    case Variant::Blocked16Fma: return blocked16(x, w, bias);
    case Variant::SplitK4: {
      float part[4] = {};
      for (size_t k = 0; k < K; ++k) part[k * 4 / K] = std::fma(x[k], w[k], part[k * 4 / K]);
      return ((part[0] + part[1]) + (part[2] + part[3])) + bias;
    }
    case Variant::Float64:
    case Variant::KTail:
    case Variant::ChannelBias: {
      double acc = bias_defect ? double(bias) + 0.05 : bias;
      const size_t n = v == Variant::KTail ? K - 1 : K;
      for (size_t k = 0; k < n; ++k) acc += double(x[k]) * double(w[k]);
      return float(acc);
    }
    case Variant::Tf32:
    case Variant::Fp16:
    case Variant::Bf16: {
      auto r = [v](float f) { return v == Variant::Tf32 ? round_bits(f, 10) : v == Variant::Bf16 ? round_bits(f, 7) : round_half(f); };
      std::vector<float> xr(K), wr(K);
      for (size_t k = 0; k < K; ++k) xr[k] = r(x[k]), wr[k] = r(w[k]);
      const float y = blocked16(xr, wr, bias);
      return v == Variant::Tf32 ? y : r(y);
    }
  }
  throw std::logic_error("unknown variant");
}

}  // namespace

const char* data_name(Data d) { return d == Data::Yolo ? "yolo" : "same-sign"; }

const char* variant_name(Variant v) {
  switch (v) {
    case Variant::Sequential: return "sequential";
    case Variant::SequentialFma: return "sequential FMA";
    case Variant::Pairwise: return "pairwise";
    case Variant::Blocked16Fma: return "16 FMA lanes";
    case Variant::SplitK4: return "split-K x4";
    case Variant::Float64: return "float64, rounded";
    case Variant::Tf32: return "TF32 inputs";
    case Variant::Fp16: return "float16";
    case Variant::Bf16: return "bfloat16";
    case Variant::KTail: return "dropped K-tail term";
    case Variant::ChannelBias: return "one channel's bias +0.05";
  }
  return "?";
}

std::vector<Variant> correct_float32_variants() {
  return {Variant::Sequential, Variant::SequentialFma, Variant::Pairwise, Variant::Blocked16Fma, Variant::SplitK4, Variant::Float64};
}

std::vector<Variant> all_variants() {
  std::vector<Variant> v = correct_float32_variants();
  for (Variant x : {Variant::Tf32, Variant::Fp16, Variant::Bf16, Variant::KTail, Variant::ChannelBias}) v.push_back(x);
  return v;
}

ConvShape parse_conv_shape(const std::string& line) {
  static const std::regex re(R"(conv2d x=(\d+)x(\d+)x(\d+)x(\d+) w=(\d+)x(\d+)x(\d+)x(\d+))");
  std::smatch m;
  if (!std::regex_search(line, m, re)) throw std::invalid_argument("not a conv2d line: " + line);
  ConvShape s{};
  s.N = std::stoll(m[1]), s.IC = std::stoll(m[2]), s.H = std::stoll(m[3]), s.W = std::stoll(m[4]);
  s.OC = std::stoll(m[5]), s.KH = std::stoll(m[7]), s.KW = std::stoll(m[8]);
  if (std::stoll(m[6]) != s.IC) throw std::invalid_argument("grouped conv2d: " + line);
  std::smatch o;
  static const std::regex stride(R"( stride=(\d+))"), pad(R"( pad=(\d+))");
  s.stride = std::regex_search(line, o, stride) ? std::stoll(o[1]) : 1;
  s.pad = std::regex_search(line, o, pad) ? std::stoll(o[1]) : 0;
  return s;
}

SampledLayer sample_layer(const ConvShape& s, Data data, const std::vector<Variant>& variants, int64_t channels, int64_t per_channel,
                          uint64_t seed) {
  SampledLayer l;
  l.K = s.K();
  l.actual.resize(variants.size());
  const int64_t OH = s.OH(), OW = s.OW(), positions = s.N * OH * OW;
  const int64_t n_channels = std::min(channels, s.OC);
  std::vector<float> x, w;
  for (int64_t j = 0; j < n_channels; ++j) {
    // Spread over OC, always including OC/2 (the channel of the bias defect).
    const int64_t oc = j == 0 ? s.OC / 2 : (j * s.OC) / n_channels;
    const float bias = bias_value(data, seed, oc);
    for (int64_t t = 0; t < per_channel; ++t) {
      const int64_t q = (int64_t(mix(seed ^ uint64_t(oc * 7919 + t))) & 0x7fffffffffff) % positions;
      const int64_t n = q / (OH * OW), oh = (q / OW) % OH, ow = q % OW;
      x.clear(), w.clear();
      for (int64_t c = 0; c < s.IC; ++c) {
        for (int64_t kh = 0; kh < s.KH; ++kh) {
          const int64_t ih = oh * s.stride - s.pad + kh;
          if (ih < 0 || ih >= s.H) continue;
          for (int64_t kw = 0; kw < s.KW; ++kw) {
            const int64_t iw = ow * s.stride - s.pad + kw;
            if (iw < 0 || iw >= s.W) continue;
            x.push_back(input_value(data, s, seed, ((n * s.IC + c) * s.H + ih) * s.W + iw));
            w.push_back(weight_value(data, s, seed, ((oc * s.IC + c) * s.KH + kh) * s.KW + kw));
          }
        }
      }
      ReductionSample r{};
      double exact = bias, abs_sum = std::fabs(double(bias)), sum_sq = 0;
      for (size_t k = 0; k < x.size(); ++k) {
        const double p = double(x[k]) * double(w[k]);
        exact += p, abs_sum += std::fabs(p), sum_sq += p * p;
      }
      r.expected = float(exact), r.abs_sum = abs_sum, r.rss = std::sqrt(sum_sq), r.channel = oc;
      l.base.push_back(r);
      for (size_t v = 0; v < variants.size(); ++v) {
        l.actual[v].push_back(variant_value(variants[v], x, w, bias, variants[v] == Variant::ChannelBias && oc == s.OC / 2));
      }
    }
  }
  return l;
}

SampledVerdict judge_sampled(const SampledLayer& l, size_t variant_index, const PrecisionProfile& profile) {
  SampledVerdict v;
  const Tolerance tol = profile_tolerance(DType::Float32, profile);
  const double scale = dot_product_bound_scale(l.K, profile);
  std::vector<ReductionSample> samples = l.base;
  for (size_t i = 0; i < samples.size(); ++i) {
    samples[i].actual = l.actual[variant_index][i];
    const double e = std::fabs(samples[i].actual - samples[i].expected);
    if (e > tol.atol + tol.rtol * std::fabs(samples[i].expected) + scale * samples[i].abs_sum) v.elementwise_ok = false;
  }
  v.stats = reduction_stats(samples, l.K, profile);
  return v;
}

}  // namespace parity::test
