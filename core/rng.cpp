#include "core/rng.h"

#include <xxhash.h>

#include <cmath>
#include <limits>
#include <type_traits>
#include <string>

#include "core/thread_pool.h"

namespace parity {

namespace {
constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;   // Philox multipliers
constexpr uint32_t kBump0 = 0x9E3779B9u, kBump1 = 0xBB67AE85u; // Weyl key schedule

inline void mulhilo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
  const uint64_t p = uint64_t(a) * b;
  hi = uint32_t(p >> 32);
  lo = uint32_t(p);
}

inline uint64_t mulhi64(uint64_t a, uint64_t b) {
  const uint64_t a_lo = a & 0xffffffffu, a_hi = a >> 32, b_lo = b & 0xffffffffu, b_hi = b >> 32;
  const uint64_t lo_lo = a_lo * b_lo, hi_lo = a_hi * b_lo, lo_hi = a_lo * b_hi, hi_hi = a_hi * b_hi;
  const uint64_t cross = (lo_lo >> 32) + (hi_lo & 0xffffffffu) + lo_hi;
  return hi_hi + (hi_lo >> 32) + (cross >> 32);
}

constexpr int64_t kFillGrain = 1 << 16;

template <typename T, typename Gen> void fill_with(Tensor& t, Gen gen) {
  T* out = t.mutable_data<T>();
  parallel_for(t.numel(), kFillGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = gen(uint64_t(i));
  });
}
}  // namespace

PhiloxCounter philox4x32_10(PhiloxCounter c, PhiloxKey k) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k[0] += kBump0;
      k[1] += kBump1;
    }
    uint32_t hi0, lo0, hi1, lo1;
    mulhilo(kMul0, c[0], hi0, lo0);
    mulhilo(kMul1, c[2], hi1, lo1);
    c = {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
  }
  return c;
}

RngStream::RngStream(uint64_t seed, std::string_view case_id, uint32_t tensor_index) {
  std::string bytes(case_id);
  for (int b = 0; b < 4; ++b) bytes += char((tensor_index >> (8 * b)) & 0xff);
  const uint64_t k = XXH64(bytes.data(), bytes.size(), seed);
  key_ = {uint32_t(k), uint32_t(k >> 32)};
}

float RngStream::uniform_f32(uint64_t i, float lo, float hi) const {
  const double u = double(block(i)[0] >> 8) * 0x1p-24;  // exact: a 24-bit integer times 2^-24
  // Computed in double (every operation correctly rounded, no contraction), then rounded once;
  // rounding may land on hi itself, which the half-open range excludes.
  const float v = float(double(lo) + (double(hi) - double(lo)) * u);
  return v < hi ? v : std::nextafter(hi, lo);
}

double RngStream::uniform_f64(uint64_t i, double lo, double hi) const {
  const PhiloxCounter w = block(i);
  const uint64_t bits = (uint64_t(w[0]) << 21) ^ (w[1] >> 11);  // 53 bits
  const double v = lo + (hi - lo) * (double(bits) * 0x1p-53);
  return v < hi ? v : std::nextafter(hi, lo);
}

int64_t RngStream::integer(uint64_t i, int64_t lo, int64_t hi) const {
  const PhiloxCounter w = block(i);
  const uint64_t x = uint64_t(w[0]) << 32 | w[1];
  const uint64_t range = uint64_t(hi) - uint64_t(lo);
  // The high half of the 64x64-bit product maps x onto [0, range) (Lemire's multiply-shift).
  const uint64_t offset = mulhi64(x, range);
  return int64_t(uint64_t(lo) + offset);
}

bool RngStream::bernoulli(uint64_t i, double p) const {
  if (p >= 1.0) return true;
  if (p <= 0.0) return false;
  const uint64_t threshold = uint64_t(p * 0x1p32);
  return block(i)[0] < threshold;
}

void RngStream::fill_uniform(Tensor& t, double lo, double hi) const {
  if (!(hi > lo)) throw Error("fill_uniform needs lo < hi").shape(t.shape().str());
  switch (t.dtype()) {
    case DType::Float16:
      fill_with<Half>(t, [&](uint64_t i) { return float_to_half(uniform_f32(i, float(lo), float(hi))); });
      return;
    case DType::Float32:
      fill_with<float>(t, [&](uint64_t i) { return uniform_f32(i, float(lo), float(hi)); });
      return;
    case DType::Float64:
      fill_with<double>(t, [&](uint64_t i) { return uniform_f64(i, lo, hi); });
      return;
    case DType::Bool:
      fill_bernoulli(t, 0.5);
      return;
    default:
      break;
  }
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      // Both ends must be representable in T (hi is exclusive, so it may be max + 1).
      const double tmin = double(std::numeric_limits<T>::min());
      const double tmax = double(std::numeric_limits<T>::max());
      const double clo = std::ceil(lo), chi = std::ceil(hi);
      // |x| < 2^62 keeps the int64 conversions below exact and defined.
      const bool in_int64 = std::abs(clo) < 0x1p62 && std::abs(chi) < 0x1p62;
      if (!in_int64 || clo < tmin || chi - 1 > tmax || chi <= clo) {
        throw Error("fill_uniform: range [" + std::to_string(lo) + ", " + std::to_string(hi) +
                    ") holds no integers or leaves " + std::string(dtype_name(t.dtype())))
            .shape(t.shape().str());
      }
      const auto ilo = int64_t(clo), ihi = int64_t(chi);
      fill_with<T>(t, [&](uint64_t i) { return T(integer(i, ilo, ihi)); });
    }
  });
}

void RngStream::fill_bernoulli(Tensor& t, double p) const {
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Half>) {
      const Half one = float_to_half(1.0f), zero{};
      fill_with<Half>(t, [&](uint64_t i) { return bernoulli(i, p) ? one : zero; });
    } else {
      fill_with<T>(t, [&](uint64_t i) { return T(bernoulli(i, p) ? 1 : 0); });
    }
  });
}

}  // namespace parity
