#include "core/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/rng.h"
#include "core/thread_pool.h"

namespace parity {
namespace {

TEST(Stats, MatchesATwoPassReference) {
  Tensor t(DType::Float32, Shape{3, 300, 301});
  RngStream(5, "stats", 0).fill_uniform(t, 1000, 1001);  // large mean, small spread
  const float* p = t.data<float>();
  long double sum = 0;
  for (int64_t i = 0; i < t.numel(); ++i) sum += p[i];
  const long double mean = sum / t.numel();
  long double m2 = 0;
  double mn = p[0], mx = p[0];
  for (int64_t i = 0; i < t.numel(); ++i) {
    m2 += (p[i] - mean) * (p[i] - mean);
    mn = std::min(mn, double(p[i]));
    mx = std::max(mx, double(p[i]));
  }
  const TensorStats s = compute_stats(t);
  EXPECT_EQ(s.count, t.numel());
  EXPECT_EQ(s.finite, t.numel());
  EXPECT_EQ(s.min, mn);
  EXPECT_EQ(s.max, mx);
  EXPECT_NEAR(s.mean, double(mean), 1e-9);
  EXPECT_NEAR(s.std, double(std::sqrt(m2 / t.numel())), 1e-9);

  const int before = num_threads();
  set_num_threads(1);
  const TensorStats serial = compute_stats(t);
  set_num_threads(before);
  EXPECT_EQ(serial.mean, s.mean);  // bit-identical: chunking does not depend on threads
  EXPECT_EQ(serial.std, s.std);
}

TEST(Stats, CountsSpecialValuesAndSkipsThem) {
  Tensor t(DType::Float64, Shape{6});
  double* p = t.mutable_data<double>();
  p[0] = std::nan("");
  p[1] = std::numeric_limits<double>::infinity();
  p[2] = -std::numeric_limits<double>::infinity();
  p[3] = 0.0;
  p[4] = -0.0;
  p[5] = 4.0;
  const TensorStats s = compute_stats(t);
  EXPECT_EQ(s.nan, 1);
  EXPECT_EQ(s.pos_inf, 1);
  EXPECT_EQ(s.neg_inf, 1);
  EXPECT_EQ(s.zeros, 2);
  EXPECT_EQ(s.finite, 3);
  EXPECT_EQ(s.max, 4.0);
  EXPECT_DOUBLE_EQ(s.mean, 4.0 / 3);
}

TEST(Stats, IntegerExtremesAreExact) {
  Tensor t(DType::Int64, Shape{3});
  int64_t* p = t.mutable_data<int64_t>();
  p[0] = (int64_t(1) << 60) + 1;
  p[1] = -7;
  p[2] = (int64_t(1) << 60) + 3;
  const TensorStats s = compute_stats(t);
  EXPECT_EQ(s.int_max, (int64_t(1) << 60) + 3);
  EXPECT_EQ(s.int_min, -7);
}

TEST(Stats, EmptyAndAllNanHaveNoFiniteValues) {
  EXPECT_EQ(compute_stats(Tensor(DType::Float32, Shape{0, 4})).finite, 0);
  Tensor h(DType::Float16, Shape{2});
  h.mutable_data<Half>()[0] = Half{0x7e00};
  h.mutable_data<Half>()[1] = Half{0x7e00};
  const TensorStats s = compute_stats(h);
  EXPECT_EQ(s.finite, 0);
  EXPECT_EQ(s.nan, 2);
}

}  // namespace
}  // namespace parity
