#include "core/rng.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <cmath>
#include <set>

#include "core/thread_pool.h"

namespace parity {
namespace {

// Known-answer vectors published with Random123 (D. E. Shaw Research, tests/kat_vectors), the
// reference implementation of Philox: counter, key -> output.
TEST(Philox, MatchesRandom123KnownAnswers) {
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (PhiloxCounter{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  EXPECT_EQ(philox4x32_10({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu}),
            (PhiloxCounter{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  EXPECT_EQ(philox4x32_10({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u}),
            (PhiloxCounter{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

// The documented stream contract: key = XXH64(case ‖ le32(tensor index), seed), element i =
// Philox(counter = (i lo, i hi, 0, 0)).
TEST(RngStream, FollowsTheDocumentedContract) {
  const std::string bytes = std::string("conv2d x=1x3x8x8") + std::string("\x02\x00\x00\x00", 4);
  const RngStream s(42, "conv2d x=1x3x8x8", 2);
  EXPECT_EQ(s.key(), XXH64(bytes.data(), bytes.size(), 42));
  const uint64_t k = s.key();
  const uint64_t i = (uint64_t(5) << 32) | 7;
  EXPECT_EQ(s.block(i), philox4x32_10({7, 5, 0, 0}, {uint32_t(k), uint32_t(k >> 32)}));
  // The float32 mapping: the top 24 bits of word 0 on a 2^-24 grid.
  EXPECT_EQ(s.uniform_f32(i, 0.0f, 1.0f), float(s.block(i)[0] >> 8) * 0x1p-24f);
}

TEST(RngStream, StreamsAreIndependent) {
  const RngStream a(1, "case", 0), b(1, "case", 1), c(2, "case", 0), d(1, "case2", 0);
  std::set<uint64_t> keys = {a.key(), b.key(), c.key(), d.key()};
  EXPECT_EQ(keys.size(), 4u);
  EXPECT_EQ(RngStream(1, "case", 0).key(), a.key());
}

TEST(RngStream, FillIsTheSameOnAnyThreadCount) {
  const RngStream s(7, "silu x=1x64x160x160", 0);
  Tensor one(DType::Float32, Shape{1, 64, 160, 160}), many(DType::Float32, Shape{1, 64, 160, 160});
  const int before = num_threads();
  set_num_threads(1);
  s.fill_uniform(one, -3, 3);
  set_num_threads(4);
  s.fill_uniform(many, -3, 3);
  set_num_threads(before);
  for (int64_t i = 0; i < one.numel(); ++i) {
    ASSERT_EQ(one.data<float>()[i], many.data<float>()[i]) << i;
    ASSERT_EQ(one.data<float>()[i], s.uniform_f32(uint64_t(i), -3, 3)) << i;
  }
}

TEST(RngStream, UniformValuesCoverTheRange) {
  const RngStream s(3, "u", 0);
  Tensor f32(DType::Float32, Shape{200000}), f64(DType::Float64, Shape{200000}), f16(DType::Float16, Shape{4096});
  s.fill_uniform(f32, -2, 6);
  s.fill_uniform(f64, -2, 6);
  s.fill_uniform(f16, 0, 1);
  double sum32 = 0, sum64 = 0;
  for (int64_t i = 0; i < f32.numel(); ++i) {
    const float v = f32.data<float>()[i];
    const double w = f64.data<double>()[i];
    ASSERT_TRUE(v >= -2 && v < 6) << v;
    ASSERT_TRUE(w >= -2 && w < 6) << w;
    sum32 += v;
    sum64 += w;
  }
  // Mean of U(-2, 6) is 2, its standard error over 2e5 draws 0.005.
  EXPECT_NEAR(sum32 / 200000, 2.0, 0.03);
  EXPECT_NEAR(sum64 / 200000, 2.0, 0.03);
  for (int64_t i = 0; i < f16.numel(); ++i) {
    const float h = half_to_float(f16.data<Half>()[i]);
    ASSERT_TRUE(h >= 0 && h <= 1) << h;  // float16 rounding may reach 1 from just below
  }
}

TEST(RngStream, IntegersHitEveryValueInRange) {
  const RngStream s(9, "idx", 3);
  Tensor t(DType::Int64, Shape{5000}), u(DType::UInt8, Shape{5000}), i32(DType::Int32, Shape{5000});
  s.fill_uniform(t, -5, 12);
  s.fill_uniform(u, 0, 256);
  s.fill_uniform(i32, -100, 100);
  std::set<int64_t> seen;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int64_t v = t.data<int64_t>()[i];
    ASSERT_TRUE(v >= -5 && v < 12) << v;
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 17u);
  std::set<int> bytes;
  for (int64_t i = 0; i < u.numel(); ++i) bytes.insert(u.data<uint8_t>()[i]);
  EXPECT_EQ(bytes.size(), 256u);
  for (int64_t i = 0; i < i32.numel(); ++i) ASSERT_TRUE(i32.data<int32_t>()[i] >= -100 && i32.data<int32_t>()[i] < 100);
  EXPECT_THROW(s.fill_uniform(u, 0, 300), Error);   // leaves uint8
  EXPECT_THROW(s.fill_uniform(t, 0.2, 0.9), Error);  // no integer inside
}

TEST(RngStream, BernoulliHasTheChosenDensity) {
  const RngStream s(11, "mask", 0);
  for (double p : {0.0, 0.01, 0.3, 1.0}) {
    Tensor m(DType::Bool, Shape{100000});
    s.fill_bernoulli(m, p);
    int64_t ones = 0;
    for (int64_t i = 0; i < m.numel(); ++i) ones += m.data<bool>()[i];
    EXPECT_NEAR(double(ones) / 100000, p, 0.006) << p;
  }
}

}  // namespace
}  // namespace parity
