#include "compare/tensor_compare.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <limits>
#include <vector>

#include "compare/tolerance.h"
#include "core/half.h"
#include "core/stats.h"

namespace parity {
namespace {

Tensor f32(std::initializer_list<float> v, Shape shape = {}) {
  Tensor t(DType::Float32, shape.rank() ? shape : Shape{int64_t(v.size())});
  std::copy(v.begin(), v.end(), t.mutable_data<float>());
  return t;
}

constexpr float kInf = std::numeric_limits<float>::infinity();

// float32 takes a vectorised pass unless a chunk holds NaN or Inf; both passes count ULPs alike:
// -0 and +0 are one point, and the smallest subnormals of either sign are 2 steps apart.
TEST(TensorCompare, UlpDistanceAcrossZeroIsTheSameOnBothPasses) {
  const float tiny = std::numeric_limits<float>::denorm_min();
  const Tolerance tol = default_tolerance(DType::Float32);
  const TensorDiff zeros = compare_tensors(f32({0.0f, 1}), f32({-0.0f, 1}), tol);
  EXPECT_EQ(zeros.max_ulp, 0);
  const TensorDiff fast = compare_tensors(f32({tiny, 1}), f32({-tiny, 1}), tol);
  const TensorDiff slow = compare_tensors(f32({tiny, NAN}), f32({-tiny, NAN}), tol);  // NaN with NaN agrees
  EXPECT_EQ(fast.max_ulp, 2);
  EXPECT_EQ(slow.max_ulp, 2);
  EXPECT_EQ(slow.state, State::Passed);
}

TEST(TensorCompare, FloatsWithinAndOutsideTheTolerance) {
  const Tolerance tol = default_tolerance(DType::Float32);
  const TensorDiff same = compare_tensors(f32({1, 2, 3}), f32({1, 2, 3}), tol);
  EXPECT_EQ(same.state, State::Passed);
  EXPECT_EQ(same.max_abs, 0);
  EXPECT_EQ(same.cosine, 1);
  const TensorDiff close = compare_tensors(f32({1, 2, 3}), f32({1, 2.000001f, 3}), tol);
  EXPECT_EQ(close.state, State::Passed);
  EXPECT_EQ(close.max_ulp, 4);  // 2.000001f is 4 float32 steps above 2 (2^-22 each)
  const TensorDiff far = compare_tensors(f32({1, 2, 3, 4}), f32({1, 2, 3.01f, 4}), tol);
  EXPECT_EQ(far.state, State::Failed);
  EXPECT_FALSE(far.structural);
  EXPECT_EQ(far.bad, 1);
  EXPECT_EQ(far.worst_index, 2);
  EXPECT_NE(far.reason.find("1 of 4 elements out of tolerance"), std::string::npos) << far.reason;
  EXPECT_NE(far.reason.find("worst at [2]"), std::string::npos) << far.reason;
  EXPECT_NEAR(far.max_abs, 0.01, 1e-6);
}

// Float32 sums drift by ~1e-5 over a chunk; the metrics must be those of float64 sums. The
// values are multiples of 2^-16 below 1, so every product is a multiple of 2^-32 and every sum,
// below 2^18, is exact in float64 whatever the order of the additions: the plain double loop
// below gives the exact answer.
TEST(TensorCompare, SumsAreFloat64AndCosineAtMostOne) {
  const int64_t n = 3 * (int64_t(1) << 16) + 123;  // several comparison chunks and a tail
  Tensor a(DType::Float32, Shape{n}), b(DType::Float32, Shape{n});
  float *pa = a.mutable_data<float>(), *pb = b.mutable_data<float>();
  for (int64_t i = 0; i < n; ++i) {
    pa[i] = float((i * 37 % 250) + 1) / 256;
    pb[i] = pa[i] + float((i * 11 % 7) - 3) / (1 << 16);
  }
  double dot = 0, na = 0, nb = 0, sum_abs = 0, sum_sq = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double x = pa[i], y = pb[i];
    dot += x * y, na += x * x, nb += y * y;
    sum_abs += std::fabs(x - y), sum_sq += (x - y) * (x - y);
  }
  const double cosine = dot / (std::sqrt(na) * std::sqrt(nb));  // numpy: a @ b / (norm(a) * norm(b))
  ASSERT_LT(cosine, 1.0);
  const TensorDiff d = compare_tensors(a, b, default_tolerance(DType::Float32));
  EXPECT_EQ(d.cosine, cosine) << std::setprecision(17) << d.cosine << " vs " << cosine;
  EXPECT_LE(d.cosine, 1.0);
  EXPECT_EQ(d.mean_abs, sum_abs / double(n));
  EXPECT_EQ(d.rmse, std::sqrt(sum_sq / double(n)));
}

// In float64, 3 / (sqrt(3) * sqrt(3)) is 1 + 2^-52: rounding alone must not pass for better
// than identical.
TEST(TensorCompare, CosineOfIdenticalTensorsIsOne) {
  const TensorDiff d = compare_tensors(f32({1, 1, 1}), f32({1, 1, 1}), default_tolerance(DType::Float32));
  EXPECT_EQ(d.cosine, 1.0);
}

TEST(TensorCompare, NanAgainstANumberIsReportedNotAveragedAway) {
  const Tolerance tol = default_tolerance(DType::Float32);
  const Tensor a = f32({1, 2, 3, 4, 5, 0.5f, 7, 8, 9, 10, 11, 12}, Shape{2, 3, 2});
  Tensor b = a.clone();
  b.mutable_data<float>()[5] = NAN;    // [0, 2, 1]
  b.mutable_data<float>()[8] = -kInf;  // [1, 1, 0]
  const TensorDiff d = compare_tensors(a, b, tol);
  EXPECT_EQ(d.state, State::Failed);
  EXPECT_EQ(d.nonfinite_mismatches, 2);
  EXPECT_EQ(d.max_abs, std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(d.cosine)) << d.cosine;
  EXPECT_EQ(d.bad, 2);
  EXPECT_EQ(d.worst_index, 5);
  EXPECT_EQ(d.worst_nd, (std::vector<int64_t>{0, 2, 1}));
  EXPECT_EQ(d.reason, "2 NaN/Inf positions differ, first at [0, 2, 1]: A 0.5, B nan");
}

TEST(TensorCompare, OppositeInfinitiesDiffer) {
  const TensorDiff d = compare_tensors(f32({1, kInf}), f32({1, -kInf}), default_tolerance(DType::Float32));
  EXPECT_EQ(d.state, State::Failed);
  EXPECT_EQ(d.nonfinite_mismatches, 1);
  EXPECT_EQ(d.max_abs, std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(d.cosine)) << d.cosine;
  EXPECT_EQ(d.reason, "1 NaN/Inf positions differ, first at [1]: A inf, B -inf");
}

TEST(TensorCompare, NanOrInfInBothAtTheSamePositionIsEqual) {
  const TensorDiff d = compare_tensors(f32({NAN, kInf, 1}), f32({NAN, kInf, 1}), default_tolerance(DType::Float32));
  EXPECT_EQ(d.state, State::Passed) << d.reason;
  EXPECT_EQ(d.nonfinite_mismatches, 0);
  EXPECT_EQ(d.bad, 0);
  EXPECT_EQ(d.max_abs, 0);
  EXPECT_EQ(d.cosine, 1);
}

// A chunk with a NaN leaves the vectorised path; the first mismatch must still be the first
// over all chunks, in flat order.
TEST(TensorCompare, FirstNanOrInfMismatchIsFirstAcrossChunks) {
  const int64_t n = 2 * (int64_t(1) << 16) + 5;
  Tensor a(DType::Float32, Shape{n});
  std::fill(a.mutable_data<float>(), a.mutable_data<float>() + n, 1.0f);
  Tensor b = a.clone();
  b.mutable_data<float>()[n - 1] = NAN;
  b.mutable_data<float>()[70000] = kInf;
  const TensorDiff d = compare_tensors(a, b, default_tolerance(DType::Float32));
  EXPECT_EQ(d.nonfinite_mismatches, 2);
  EXPECT_EQ(d.worst_index, 70000);
  EXPECT_EQ(d.reason, "2 NaN/Inf positions differ, first at [70000]: A 1, B inf");
}

TEST(TensorCompare, WorstElementAsCoordinates) {
  Tensor a(DType::Float32, Shape{2, 3, 4});
  for (int64_t i = 0; i < a.numel(); ++i) a.mutable_data<float>()[i] = float(i + 1);
  Tensor b = a.clone();
  b.mutable_data<float>()[4] += 0.5f;  // [0, 1, 0]
  b.mutable_data<float>()[23] += 2;    // [1, 2, 3], the worst
  const TensorDiff f = compare_tensors(a, b, default_tolerance(DType::Float32));
  EXPECT_EQ(f.worst_index, 23);
  EXPECT_EQ(f.worst_nd, (std::vector<int64_t>{1, 2, 3}));

  Tensor x(DType::Int32, Shape{2, 3, 4});
  EXPECT_TRUE(compare_tensors(x, x, Tolerance{}).worst_nd.empty());
  Tensor y = x.clone();
  y.mutable_data<int32_t>()[14] = 3;  // [1, 0, 2], the first mismatch
  y.mutable_data<int32_t>()[20] = 3;
  const TensorDiff e = compare_tensors(x, y, Tolerance{});
  EXPECT_EQ(e.worst_index, 14);
  EXPECT_EQ(e.worst_nd, (std::vector<int64_t>{1, 0, 2}));
}

TEST(TensorCompare, MistrustReason) {
  EXPECT_EQ(mistrust_reason(Tensor(DType::Float32, Shape{5})), "A is all zeros");
  EXPECT_EQ(mistrust_reason(f32({-0.0f, 0.0f, -0.0f})), "A is all zeros");  // -0.0 == 0
  Tensor h(DType::Float16, Shape{3}), g(DType::Float64, Shape{3});
  h.mutable_data<Half>()[1].bits = 0x8000;  // -0.0
  g.mutable_data<double>()[2] = -0.0;
  EXPECT_EQ(mistrust_reason(h), "A is all zeros");
  EXPECT_EQ(mistrust_reason(g), "A is all zeros");
  EXPECT_EQ(mistrust_reason(Tensor(DType::Bool, Shape{4})), "A is all false");
  EXPECT_EQ(mistrust_reason(Tensor(DType::Int64, Shape{0})), "no elements");
  EXPECT_EQ(mistrust_reason(Tensor(DType::Float32, Shape{2, 0})), "no elements");

  EXPECT_EQ(mistrust_reason(f32({0, NAN})), "");  // NaN is not zero
  EXPECT_EQ(mistrust_reason(f32({-0.0f, 1e-45f})), "");  // the smallest subnormal is not zero
  // The one nonzero element at the end of a tensor longer than one scan chunk.
  const int64_t n = (int64_t(1) << 21) + 3;
  Tensor big(DType::Float32, Shape{n});
  big.mutable_data<float>()[n - 1] = -2;
  EXPECT_EQ(mistrust_reason(big), "");
  Tensor flag(DType::Bool, Shape{4});
  flag.mutable_data<bool>()[3] = true;
  EXPECT_EQ(mistrust_reason(flag), "");
  Tensor i64(DType::Int64, Shape{2});
  i64.mutable_data<int64_t>()[1] = std::numeric_limits<int64_t>::min();  // only the top bit set
  EXPECT_EQ(mistrust_reason(i64), "");

  // compare_tensors applies the same rule.
  const TensorDiff d = compare_tensors(f32({-0.0f, 0}), f32({-0.0f, 0}), default_tolerance(DType::Float32));
  EXPECT_EQ(d.state, State::Mistrusted);
  EXPECT_EQ(d.reason, "A is all zeros");
}

TEST(TensorCompare, PerElementBoundAddsToTheTolerance) {
  Tolerance tol = default_tolerance(DType::Float32);
  int64_t calls = 0;
  tol.bound = [&calls](int64_t i) { return ++calls, i == 1 ? 0.5 : 0.0; };
  EXPECT_EQ(compare_tensors(f32({1, 1}), f32({1, 1.4f}), tol).state, State::Passed);
  EXPECT_EQ(compare_tensors(f32({1, 1}), f32({1.4f, 1}), tol).state, State::Failed);
  EXPECT_EQ(calls, 2);  // asked only for the element beyond atol + rtol * |a|, once per compare
}

// The count beyond tolerance and the first element of the largest excess, by a plain loop over
// every element in float64 (the per-element bound, when there is one, added where the defaults
// are exceeded): what the comparison's chunked and vectorised passes must give.
struct PlainVerdict {
  int64_t bad = 0, worst = -1;
  double worst_allowed = 0;
};
PlainVerdict plain_loop(const float* x, const float* y, int64_t n, const Tolerance& tol) {
  PlainVerdict v;
  double worst_excess = -INFINITY;
  for (int64_t i = 0; i < n; ++i) {
    const double d = std::fabs(double(x[i]) - double(y[i]));
    double allowed = tol.atol + tol.rtol * std::fabs(double(x[i]));
    if (d > allowed && tol.bound) allowed += tol.bound(i);
    v.bad += d > allowed;
    if (d - allowed > worst_excess) worst_excess = d - allowed, v.worst = i, v.worst_allowed = allowed;
  }
  return v;
}

// Over several chunks, where some chunks need the bound and others do not: the count beyond
// tolerance, the worst element and its allowance are those of a plain loop over every element.
TEST(TensorCompare, PerElementBoundOverManyChunksMatchesAPlainLoop) {
  const int64_t n = 3 * 65536 + 123;
  Tensor a(DType::Float32, Shape{n}), b(DType::Float32, Shape{n});
  float *x = a.mutable_data<float>(), *y = b.mutable_data<float>();
  for (int64_t i = 0; i < n; ++i) {
    x[i] = float(std::sin(0.001 * double(i)) * 4);
    // Chunk 0 agrees to rounding; chunk 1 is off by 2e-5 here and there (within the bound at
    // even indices, beyond it at odd ones); chunk 2 is off by 1e-4 at one element beyond it.
    y[i] = x[i] + (i / 65536 == 1 && i % 1001 == 0 ? 2e-5f : 0.0f) + (i == 2 * 65536 + 777 ? 1e-4f : 0.0f);
  }
  Tolerance tol = default_tolerance(DType::Float32);
  tol.bound = [](int64_t i) { return i % 2 == 0 ? 5e-5 : 1e-6; };
  const PlainVerdict plain = plain_loop(x, y, n, tol);
  ASSERT_GT(plain.bad, 1);
  const TensorDiff r = compare_tensors(a, b, tol);
  EXPECT_EQ(r.bad, plain.bad);
  EXPECT_EQ(r.worst_index, plain.worst);
  EXPECT_EQ(r.worst_allowed, plain.worst_allowed);
  EXPECT_EQ(r.state, State::Failed);
}

// The worst element is the first of the largest excess, where blocks of elements within the
// defaults and blocks with elements beyond them (the bound asked for, or no bound) alternate, and
// the largest excess recurs within a block, across blocks and across chunks: in memory and
// streamed, the count, the index and the allowance of a plain loop over every element.
TEST(TensorCompare, WorstElementIsTheFirstOfTiesAsAPlainLoopFindsIt) {
  const int64_t n = 3 * 65536 + 77;
  Tensor a(DType::Float32, Shape{n}), b(DType::Float32, Shape{n});
  float *x = a.mutable_data<float>(), *y = b.mutable_data<float>();
  for (int64_t i = 0; i < n; ++i) {
    x[i] = float(std::cos(0.003 * double(i)) * 2);
    // Rounding-sized differences everywhere, differences beyond the defaults in some blocks of
    // 256 (every third block, sparsely), and one value of the largest difference at five places:
    // twice in one block, in two later blocks and in a later chunk.
    float e = float(i % 7) * 1e-7f * x[i];
    if ((i / 256) % 3 == 1 && i % 97 == 0) e = 3e-5f;
    for (const int64_t at : {int64_t(1000), int64_t(1001), int64_t(1100), int64_t(4000), int64_t(70000)}) {
      if (i == at) x[i] = 1.0f, e = 0.0625f;
    }
    y[i] = x[i] + e;
  }
  for (const bool bounded : {false, true}) {
    SCOPED_TRACE(bounded ? "with a per-element bound" : "without a bound");
    Tolerance tol = default_tolerance(DType::Float32);
    if (bounded) tol.bound = [](int64_t i) { return i % 3 == 0 ? 1e-4 : 1e-6; };
    const PlainVerdict plain = plain_loop(x, y, n, tol);
    ASSERT_EQ(plain.worst, 1000);
    const TensorDiff whole = compare_tensors(a, b, tol);
    TensorCompareStream stream(DType::Float32, a.shape(), tol);
    const int64_t piece = TensorCompareStream::piece_elements();
    for (int64_t lo = 0; lo < n; lo += piece) {
      stream.feed(a.bytes() + size_t(lo) * 4, b.bytes() + size_t(lo) * 4, std::min(piece, n - lo));
    }
    for (const TensorDiff& r : {whole, stream.finish()}) {
      EXPECT_EQ(r.bad, plain.bad);
      EXPECT_EQ(r.worst_index, plain.worst);
      EXPECT_EQ(r.worst_allowed, plain.worst_allowed);
    }
  }
}

// With a floor under the bound (a dot product's S is at least |exact|), an element within the
// defaults plus floor * min(|a|, |b|) passes without the bound being asked, unless it could be the
// worst: the count, the worst element and its allowance stay those of the plain loop, in memory
// and streamed, with the bound asked far less often. Where every element passes, the worst is one
// the floor alone would have passed: the guard that asks the bound for it is what finds it, with
// the allowance the bound gives.
TEST(TensorCompare, BoundFloorSparesTheBoundAndKeepsTheVerdict) {
  const int64_t n = 2 * 65536 + 301;
  for (const bool defect : {true, false}) {
    SCOPED_TRACE(defect ? "one element beyond the bound" : "every element within it");
    Tensor a(DType::Float32, Shape{n}), b(DType::Float32, Shape{n});
    float *x = a.mutable_data<float>(), *y = b.mutable_data<float>();
    for (int64_t i = 0; i < n; ++i) {
      x[i] = float(std::sin(0.002 * double(i)) + 5);
      // Every element beyond the defaults (atol 1e-5, rtol 1.3e-6), within the floor, but for
      // every 50th with the defect: without it, the worst element is one the floor passes.
      const double share = defect && i % 50 == 0 ? 1.9e-5 : i % 2 ? 0.9e-5 : 0.5e-5;
      y[i] = float(double(x[i]) * (1 + (defect && i == 70001 ? 5e-5 : share)));
    }
    std::atomic<int64_t> asked{0};
    Tolerance tol = default_tolerance(DType::Float32);
    tol.bound = [&asked, x](int64_t i) { return ++asked, 2e-5 * std::fabs(double(x[i])); };
    const PlainVerdict plain = plain_loop(x, y, n, tol);
    if (defect) {
      ASSERT_EQ(plain.worst, 70001);
    } else {
      ASSERT_EQ(plain.bad, 0);
    }
    int64_t asked_without = 0;
    for (const double floor : {0.0, 1e-5}) {  // 1e-5 * min(|a|, |b|) <= 2e-5 * |a|: within the bound
      SCOPED_TRACE(floor > 0 ? "with a floor" : "without a floor");
      tol.bound_floor = floor, tol.floor_count = n;
      asked = 0;
      const TensorDiff whole = compare_tensors(a, b, tol);
      TensorCompareStream stream(DType::Float32, a.shape(), tol);
      const int64_t piece = TensorCompareStream::piece_elements();
      for (int64_t lo = 0; lo < n; lo += piece) stream.feed(a.bytes() + size_t(lo) * 4, b.bytes() + size_t(lo) * 4, std::min(piece, n - lo));
      for (const TensorDiff& r : {whole, stream.finish()}) {
        EXPECT_EQ(r.state, defect ? State::Failed : State::Passed);
        EXPECT_EQ(r.bad, plain.bad);
        EXPECT_EQ(r.worst_index, plain.worst);
        EXPECT_EQ(r.worst_allowed, plain.worst_allowed);
      }
      if (floor == 0) asked_without = asked;
    }
    // With the floor, under a quarter as often; where the worst is an element the floor passes,
    // every element may be the worst in turn, and the floor spares nothing.
    if (defect) {
      EXPECT_LT(asked.load() * 4, asked_without);
    }
    EXPECT_LE(asked.load(), asked_without);
  }
}

// The floor stands aside where it does not hold: past floor_count (an output the call cannot
// have made, where the bound is 0) and where floor_holds says no (an Inf among a dot product's
// terms). There every element beyond the defaults asks the bound.
TEST(TensorCompare, BoundFloorStandsAsideWhereItDoesNotHold) {
  // Beyond the defaults everywhere; the first element uses most of its bound, the others are
  // within the floor and, once the first is the worst, need no bound of their own.
  const Tensor a = f32({100, 100, 100, 100}), b = f32({100.95f, 100.01f, 100.01f, 100.01f});
  int64_t asked = 0, answered = 0;
  Tolerance tol = default_tolerance(DType::Float32);
  tol.bound = [&asked](int64_t i) { return ++asked, i < 3 ? 1.0 : 0.0; };  // past the call's 3 elements: 0
  tol.bound_floor = 1e-3, tol.floor_count = 3;
  for (const bool holds : {true, false}) {
    SCOPED_TRACE(holds ? "the floor holds" : "it does not");
    tol.floor_holds = std::make_shared<LazyAnswer>([&answered, holds] { return ++answered, holds; });
    asked = answered = 0;
    const TensorDiff r = compare_tensors(a, b, tol);
    EXPECT_EQ(r.bad, 1);  // the fourth element, past floor_count: no floor there
    EXPECT_EQ(r.worst_index, 3);
    EXPECT_EQ(answered, 1);                // worked out once
    EXPECT_EQ(asked, holds ? 2 : 4);       // the first (no worst yet) and the fourth; or every one
  }
}

// The streamed comparison (pieces in order, as two files are read) gives compare_tensors'
// figures to the bit: over several pieces, with a per-element bound, NaN/Inf mismatches, all
// zeros, and each float dtype.
TEST(TensorCompare, StreamedMatchesInMemory) {
  const int64_t piece = TensorCompareStream::piece_elements(), n = 2 * piece + 12345;
  const auto same = [](const TensorDiff& x, const TensorDiff& y) {
    EXPECT_EQ(x.state, y.state);
    EXPECT_EQ(x.reason, y.reason);
    EXPECT_EQ(x.count, y.count);
    for (const auto& [u, v] : {std::pair{x.max_abs, y.max_abs}, {x.mean_abs, y.mean_abs}, {x.max_rel, y.max_rel}, {x.rmse, y.rmse},
                               {x.worst_a, y.worst_a}, {x.worst_b, y.worst_b}, {x.worst_allowed, y.worst_allowed}}) {
      EXPECT_EQ(std::memcmp(&u, &v, sizeof u), 0) << u << " " << v;
    }
    EXPECT_TRUE(x.cosine == y.cosine || (std::isnan(x.cosine) && std::isnan(y.cosine)));
    EXPECT_EQ(x.max_ulp, y.max_ulp);
    EXPECT_EQ(x.nonfinite_mismatches, y.nonfinite_mismatches);
    EXPECT_EQ(x.bad, y.bad);
    EXPECT_EQ(x.worst_index, y.worst_index);
    EXPECT_EQ(x.worst_nd, y.worst_nd);
  };
  for (const DType dtype : {DType::Float32, DType::Float16, DType::Float64}) {
    for (int variant = 0; variant < 8; ++variant) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " variant " + std::to_string(variant));
      Tensor a64(DType::Float64, Shape{n}), b64(DType::Float64, Shape{n});
      double *x = a64.mutable_data<double>(), *y = b64.mutable_data<double>();
      for (int64_t i = 0; i < n; ++i) {
        x[i] = variant == 3 ? 0.0 : std::sin(0.001 * double(i)) * 4;
        y[i] = x[i] * (1 + 1e-6 * double(i % 5)) + (i % 4001 == 0 ? 3e-5 : 0.0);
        // 4: the error grows along the tensor, so every chunk holds a new worst; 5: the same
        // largest error in several chunks, the first of which holds the worst element.
        if (variant == 4) y[i] = x[i] + 1e-12 * double(i);
        if (variant == 5) {
          if (i % 70001 == 3) x[i] = 1.0;
          y[i] = x[i] + (i % 70001 == 3 ? 0.0009765625 : 0.0);
        }
      }
      if (variant == 2) x[piece + 7] = NAN, y[2 * piece + 9] = INFINITY;
      const auto as = [dtype](const Tensor& t) {
        if (dtype != DType::Float16) return float_values_as(t, dtype);
        Tensor h(DType::Float16, t.shape());
        for (int64_t i = 0; i < t.numel(); ++i) h.mutable_data<Half>()[i] = float_to_half(float(t.data<double>()[i]));
        return h;
      };
      const Tensor a = as(a64), b = as(b64);
      Tolerance tol = default_tolerance(dtype);
      if (variant == 1) tol.bound = [](int64_t i) { return i % 2 ? 1e-4 : 0.0; };
      // 6: an atol beyond float32's range (every excess is -inf in the vectorised pass); 7: a
      // bound that is infinite wherever it is asked for.
      if (variant == 6) tol.atol = 1e39;
      if (variant == 7) tol.bound = [](int64_t) { return std::numeric_limits<double>::infinity(); };
      const TensorDiff whole = compare_tensors(a, b, tol);
      TensorCompareStream stream(dtype, a.shape(), tol);
      const size_t item = dtype_size(dtype);
      for (int64_t lo = 0; lo < n; lo += piece) {
        stream.feed(a.bytes() + size_t(lo) * item, b.bytes() + size_t(lo) * item, std::min(piece, n - lo));
      }
      const TensorDiff streamed = stream.finish();
      same(streamed, whole);
    }
  }
}

TEST(TensorCompare, StructureIntegersAndDegenerateResults) {
  const Tolerance exact;
  const TensorDiff s = compare_tensors(f32({1, 2}), f32({1, 2, 3}), exact);
  EXPECT_TRUE(s.structural);
  EXPECT_NE(s.reason.find("A is float32 2, B is float32 3"), std::string::npos) << s.reason;
  Tensor a(DType::Int64, Shape{2, 2}), b(DType::Int64, Shape{2, 2});
  a.mutable_data<int64_t>()[3] = 7;
  b.mutable_data<int64_t>()[3] = 7;
  EXPECT_EQ(compare_tensors(a, b, exact).state, State::Passed);
  b.mutable_data<int64_t>()[1] = 5;
  const TensorDiff d = compare_tensors(a, b, exact);
  EXPECT_EQ(d.state, State::Failed);
  EXPECT_NE(d.reason.find("first at [0, 1]: A 0, B 5"), std::string::npos) << d.reason;
  EXPECT_EQ(compare_tensors(Tensor(DType::Bool, Shape{4}), Tensor(DType::Bool, Shape{4}), exact).state, State::Mistrusted);
  EXPECT_EQ(compare_tensors(Tensor(DType::Int64, Shape{0}), Tensor(DType::Int64, Shape{0}), exact).state, State::Mistrusted);
  EXPECT_EQ(compare_tensors(f32({0, 0}), f32({0, 0}), default_tolerance(DType::Float32)).state, State::Mistrusted);
}

}  // namespace
}  // namespace parity
