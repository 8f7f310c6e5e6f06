#include "compare/tensor_compare.h"

#include <gtest/gtest.h>

#include <cmath>

#include "compare/tolerance.h"

namespace parity {
namespace {

Tensor f32(std::initializer_list<float> v) {
  Tensor t(DType::Float32, Shape{int64_t(v.size())});
  std::copy(v.begin(), v.end(), t.mutable_data<float>());
  return t;
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

TEST(TensorCompare, NanAndInfPositionsMustMatch) {
  const Tolerance tol = default_tolerance(DType::Float32);
  EXPECT_EQ(compare_tensors(f32({NAN, INFINITY, 1}), f32({NAN, INFINITY, 1}), tol).state, State::Passed);
  const TensorDiff d = compare_tensors(f32({1, NAN, 1}), f32({1, 1, 1}), tol);
  EXPECT_EQ(d.state, State::Failed);
  EXPECT_NE(d.reason.find("NaN/Inf positions differ: at [1]"), std::string::npos) << d.reason;
  EXPECT_EQ(compare_tensors(f32({INFINITY}), f32({-INFINITY}), tol).state, State::Failed);
}

TEST(TensorCompare, PerElementBoundAddsToTheTolerance) {
  Tolerance tol = default_tolerance(DType::Float32);
  int64_t calls = 0;
  tol.bound = [&calls](int64_t i) { return ++calls, i == 1 ? 0.5 : 0.0; };
  EXPECT_EQ(compare_tensors(f32({1, 1}), f32({1, 1.4f}), tol).state, State::Passed);
  EXPECT_EQ(compare_tensors(f32({1, 1}), f32({1.4f, 1}), tol).state, State::Failed);
  EXPECT_EQ(calls, 2);  // asked only for the element beyond atol + rtol * |a|, once per compare
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
