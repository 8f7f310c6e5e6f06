// torch 2.4's F.rms_norm as the aten plugin runs it again (kernels/aten/torch_dispatch.cpp
// rms_norm_call), against the norm written out here in plain loops, with and without a weight, over
// one and two trailing dims; its bound's sums (at least |y|) and terms (K + 8); a call with
// eps=None or a normalized_shape that is not the input's refused; and the judge at bfloat16: a
// correct kernel's output rounded to the type passes, one with one element off fails that side.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "compare/judge.h"
#include "core/error.h"
#include "core/half.h"
#include "core/rng.h"
#include "kernels/aten/plugin.h"

namespace parity {
namespace {

const std::string kOp = "torch.nn.functional.rms_norm";

Tensor random(const Shape& shape, uint64_t seed, double lo = -2, double hi = 2) {
  Tensor t(DType::Float32, shape);
  RngStream(seed).fill_uniform(t, lo, hi);
  return t;
}

// x [rows, K] (the normalised dims flattened), w [K] or none.
std::vector<double> rms_norm(const Tensor& x, const Tensor* w, int64_t K, double eps) {
  const float* X = x.data<float>();
  std::vector<double> y(size_t(x.numel()));
  for (int64_t r = 0; r < x.numel() / K; ++r) {
    double squares = 0;
    for (int64_t i = 0; i < K; ++i) squares += double(X[r * K + i]) * X[r * K + i];
    const double s = std::sqrt(squares / double(K) + eps);
    for (int64_t i = 0; i < K; ++i) y[size_t(r * K + i)] = X[r * K + i] / s * (w ? double(w->data<float>()[i]) : 1.0);
  }
  return y;
}

void expect_rms_norm(const TorchCallResult& r, const std::vector<double>& y, int64_t K) {
  ASSERT_EQ(r.outputs.size(), 1u);
  ASSERT_EQ(r.outputs[0].numel(), int64_t(y.size()));
  ASSERT_EQ(r.bound_sums.size(), 1u);
  EXPECT_EQ(r.bound_terms.at(0), K + 8);
  for (size_t i = 0; i < y.size(); ++i) {
    EXPECT_NEAR(r.outputs[0].data<float>()[i], y[i], 1e-6 * (1 + std::fabs(y[i]))) << i;
    EXPECT_GE(r.bound_sums[0].data<double>()[i], std::fabs(y[i]) * (1 - 1e-12)) << i;
  }
}

TEST(TorchCallRmsNorm, AsWrittenOutWithAndWithoutAWeight) {
  const Tensor x = random(Shape{3, 4, 6}, 1), w = random(Shape{6}, 2), w2 = random(Shape{4, 6}, 3);
  expect_rms_norm(aten_plugin().torch_call(kOp + " in0=3x4x6 in2=6 arg1=(6,) arg3=1e-06", {x, w}), rms_norm(x, &w, 6, 1e-6), 6);
  expect_rms_norm(aten_plugin().torch_call(kOp + " in0=3x4x6 arg1=[6] arg2=None eps=0.001", {x}), rms_norm(x, nullptr, 6, 1e-3), 6);
  // Over the two trailing dims, the weight of their shape given by keyword.
  expect_rms_norm(aten_plugin().torch_call(kOp + " in0=3x4x6 weight=4x6 arg1=(4,6) eps=1e-05", {x, w2}), rms_norm(x, &w2, 24, 1e-5), 24);
}

TEST(TorchCallRmsNorm, AnEpsTheLineDoesNotGiveAndAnotherShapeAreRefused) {
  const Tensor x = random(Shape{2, 6}, 4);
  EXPECT_THROW(aten_plugin().torch_call(kOp + " in0=2x6 arg1=(6,) arg2=None arg3=None", {x}), Error);
  EXPECT_THROW(aten_plugin().torch_call(kOp + " in0=2x6 arg1=(6,)", {x}), Error);
  EXPECT_THROW(aten_plugin().torch_call(kOp + " in0=2x6 arg1=(5,) eps=1e-06", {x}), Error);
  EXPECT_THROW(aten_plugin().torch_call(kOp + " in0=2x6 arg1=(2,6,1) eps=1e-06", {x}), Error);
}

// An LLM's hidden size (K = 512) at bfloat16: inputs and weights on bfloat16's grid, as a half run
// holds them; each side's output the norm rounded to bfloat16.
TEST(TorchCallRmsNorm, AtBfloat16OneWrongElementFails) {
  auto on_grid = [](Tensor t) {
    for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = round_to(t.data<float>()[i], HalfType::Bf16);
    return t;
  };
  const Tensor x = on_grid(random(Shape{8, 512}, 5)), w = on_grid(random(Shape{512}, 6, 0.5, 1.5));
  const std::string line = kOp + " in0=8x512 in2=512 arg1=(512,) arg3=1e-06";
  auto output = [&](int64_t wrong_at) {
    const std::vector<double> y = rms_norm(x, &w, 512, 1e-6);
    Tensor out(DType::Float32, Shape{8, 512});
    for (size_t i = 0; i < y.size(); ++i) out.mutable_data<float>()[i] = round_to(float(y[i]), HalfType::Bf16);
    if (wrong_at >= 0) out.mutable_data<float>()[wrong_at] *= 1.0625f;  // 6 %: beyond bfloat16's rounding
    return out;
  };
  auto side = [&](Tensor out) {
    LayerSide s;
    s.line = line, s.roles = {"out0"}, s.outputs = {std::move(out)};
    s.inputs = [&] { return std::vector<Tensor>{x, w}; };
    return s;
  };
  JudgeOptions o;
  o.precision = Precision::Bf16;
  const LayerVerdict ok = judge_layer("norm", side(output(-1)), side(output(-1)), true, o);
  EXPECT_NE(ok.state, State::Failed) << ok.reason;
  const LayerVerdict wrong = judge_layer("norm", side(output(-1)), side(output(1000)), true, o);
  EXPECT_EQ(wrong.state, State::Failed) << wrong.reason;
  EXPECT_EQ(wrong.defective(), Sides::B) << wrong.reason;
}

}  // namespace
}  // namespace parity
