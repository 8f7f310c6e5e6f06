#include "core/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace parity {
namespace {

// An independent definition of binary16: value from the fields by the textbook formula.
double half_value(uint16_t bits) {
  const int sign = bits >> 15, exp = (bits >> 10) & 0x1f, mant = bits & 0x3ff;
  double v;
  if (exp == 0x1f) {
    v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (exp == 0) {
    v = std::ldexp(double(mant), -24);
  } else {
    v = std::ldexp(double(1024 + mant), exp - 25);
  }
  return sign ? -v : v;
}

TEST(Half, EveryBitPatternDecodes) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const double expected = half_value(uint16_t(b));
    const float got = half_to_float(Half{uint16_t(b)});
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(got)) << b;
      EXPECT_TRUE(std::isnan(half_to_float(float_to_half(got)))) << b;
    } else {
      ASSERT_EQ(double(got), expected) << "bits " << b;
      ASSERT_EQ(std::signbit(got), bool(b & 0x8000)) << b;
      ASSERT_EQ(float_to_half(got).bits, b) << "round trip of bits " << b;
    }
  }
}

// Brute force nearest-even rounding over the positive finite halves, plus overflow to Inf at
// 65520 (the midpoint between 65504 and the next step, 65536).
uint16_t nearest_half(float f) {
  const double x = std::fabs(double(f));
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  if (x >= 65520.0) return sign | 0x7c00;
  uint16_t best = 0;
  for (uint32_t b = 1; b < 0x7c00; ++b) {
    const double db = std::fabs(half_value(uint16_t(b)) - x), dbest = std::fabs(half_value(best) - x);
    if (db < dbest || (db == dbest && (b & 1) == 0)) best = uint16_t(b);
  }
  return sign | best;
}

TEST(Half, RoundsToNearestEven) {
  std::vector<float> probes = {0.0f, -0.0f, 1.0f, 65504.0f, 65519.99f, 65520.0f, 1e9f, 5.9604645e-8f,
                               2.9802322e-8f, 2.9802326e-8f, 6.1035156e-5f, 6.1035153e-5f, 1.00048828125f,
                               1.000732421875f, 3.14159265f, -2.71828f, 1e-10f};
  // Every midpoint between neighbouring halves in a few binades, and points just around them.
  for (uint32_t b = 0x3c00; b < 0x3c40; ++b) {
    const double mid = (half_value(uint16_t(b)) + half_value(uint16_t(b + 1))) / 2;
    probes.push_back(float(mid));
    probes.push_back(std::nextafter(float(mid), 0.0f));
    probes.push_back(std::nextafter(float(mid), 1e9f));
  }
  for (uint32_t b = 0x0001; b < 0x0020; ++b) {  // subnormal midpoints
    probes.push_back(float((half_value(uint16_t(b)) + half_value(uint16_t(b + 1))) / 2));
  }
  uint32_t s = 12345;
  for (int i = 0; i < 300; ++i) {  // scattered magnitudes from 2^-30 to 2^17
    s = s * 1664525u + 1013904223u;
    probes.push_back(std::ldexp(float(s >> 8) / float(1 << 24), int(s % 48) - 30));
  }
  for (float f : probes) {
    EXPECT_EQ(float_to_half(f).bits, nearest_half(f)) << f;
    EXPECT_EQ(float_to_half(-f).bits, nearest_half(-f)) << -f;
  }
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::infinity()).bits, 0x7c00);
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(std::nanf("")))));
}

}  // namespace
}  // namespace parity
