// torch 2's F.scaled_dot_product_attention as the aten plugin runs it again (kernels/aten/
// torch_dispatch.cpp attention_call), against attention written out here in plain loops: the
// weights of each query over its keys (causal, a boolean or an additive mask, broadcast; a row
// with every key masked gives 0), their mix of the values, grouped-query heads, a given scale, and
// the bound's sums (sum_j P_ij |v_j| at least) and terms (max(2L + 1, E)); and the judge with that
// bound at float16: a correct half kernel's output passes, one whose causal mask lets each query
// see one key too many fails.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "compare/judge.h"
#include "core/error.h"
#include "core/half.h"
#include "core/rng.h"
#include "kernels/aten/plugin.h"

namespace parity {
namespace {

Tensor random(const Shape& shape, uint64_t seed) {
  Tensor t(DType::Float32, shape);
  RngStream(seed).fill_uniform(t, -2, 2);
  return t;
}

struct Expected {
  std::vector<double> out, weighted_abs;  // [H, Lq, Ev], sum_j P_ij |v_j|
};

using Allowed = std::function<bool(int64_t i, int64_t j)>;
using Additive = std::function<double(int64_t i, int64_t j)>;

// q [1,H,Lq,E], k [1,Hk,L,E], v [1,Hk,L,Ev]; query head h reads key head h / (H / Hk).
Expected attention(const Tensor& q, const Tensor& k, const Tensor& v, const Allowed& allowed, const Additive& additive, double scale = 0) {
  const int64_t H = q.shape()[1], Lq = q.shape()[2], E = q.shape()[3], Hk = k.shape()[1], L = k.shape()[2], Ev = v.shape()[3];
  if (scale == 0) scale = 1 / std::sqrt(double(E));
  const float *Q = q.data<float>(), *K = k.data<float>(), *V = v.data<float>();
  Expected e;
  e.out.assign(size_t(H * Lq * Ev), 0), e.weighted_abs.assign(size_t(H * Lq * Ev), 0);
  for (int64_t h = 0; h < H; ++h) {
    const int64_t hk = h / (H / Hk);
    for (int64_t i = 0; i < Lq; ++i) {
      std::vector<double> s(size_t(L), -INFINITY);
      double top = -INFINITY;
      for (int64_t j = 0; j < L; ++j) {
        if (!allowed(i, j)) continue;
        double dot = 0;
        for (int64_t c = 0; c < E; ++c) dot += double(Q[(h * Lq + i) * E + c]) * double(K[(hk * L + j) * E + c]);
        s[size_t(j)] = dot * scale + additive(i, j);
        top = std::max(top, s[size_t(j)]);
      }
      if (top == -INFINITY) continue;  // every key masked: 0
      double total = 0;
      for (double& x : s) total += (x = std::exp(x - top));
      for (int64_t j = 0; j < L; ++j) {
        const double p = s[size_t(j)] / total;
        for (int64_t c = 0; c < Ev; ++c) {
          e.out[size_t((h * Lq + i) * Ev + c)] += p * V[(hk * L + j) * Ev + c];
          e.weighted_abs[size_t((h * Lq + i) * Ev + c)] += p * std::fabs(V[(hk * L + j) * Ev + c]);
        }
      }
    }
  }
  return e;
}

void expect_attention(const TorchCallResult& r, const Expected& e, int64_t terms) {
  ASSERT_EQ(r.outputs.size(), 1u);
  ASSERT_EQ(r.outputs[0].numel(), int64_t(e.out.size()));
  ASSERT_EQ(r.bound_sums.size(), 1u);
  EXPECT_EQ(r.bound_terms.at(0), terms);
  for (size_t i = 0; i < e.out.size(); ++i) {
    EXPECT_NEAR(r.outputs[0].data<float>()[i], e.out[i], 1e-6 * (1 + std::fabs(e.out[i]))) << i;
    EXPECT_GE(r.bound_sums[0].data<double>()[i], e.weighted_abs[i] * (1 - 1e-12)) << i;
  }
}

const std::string kOp = "torch.nn.functional.scaled_dot_product_attention";
const Allowed everywhere = [](int64_t, int64_t) { return true; };
const Additive none = [](int64_t, int64_t) { return 0.0; };

TEST(TorchCallAttention, PlainCausalAndMaskedAttentionAsWrittenOut) {
  const Tensor q = random(Shape{1, 2, 5, 4}, 1), k = random(Shape{1, 2, 6, 4}, 2), v = random(Shape{1, 2, 6, 3}, 3);
  const std::string shapes = kOp + " in0=1x2x5x4 in1=1x2x6x4 in2=1x2x6x3";
  expect_attention(aten_plugin().torch_call(shapes + " arg3=None arg4=0.0 arg5=False", {q, k, v}), attention(q, k, v, everywhere, none), 13);
  // is_causal: query i sees keys 0..i (the mask's top-left corner, as PyTorch aligns it)
  expect_attention(aten_plugin().torch_call(shapes + " arg3=None arg4=0.0 arg5=True", {q, k, v}),
                   attention(q, k, v, [](int64_t i, int64_t j) { return j <= i; }, none), 13);
  Tensor keep(DType::Bool, Shape{5, 6}), add(DType::Float32, Shape{5, 6});
  for (int64_t i = 0; i < 30; ++i) {
    keep.mutable_data<bool>()[i] = i % 4 != 1 && i >= 6;  // row 0: every key masked
    add.mutable_data<float>()[i] = float(i % 3) - 1;
  }
  const std::string masked = kOp + " in0=1x2x5x4 in1=1x2x6x4 in2=1x2x6x3 in3=5x6 arg4=0.0 arg5=False";
  expect_attention(aten_plugin().torch_call(masked, {q, k, v, keep}),
                   attention(q, k, v, [](int64_t i, int64_t j) { return (i * 6 + j) % 4 != 1 && i * 6 + j >= 6; }, none), 13);
  expect_attention(aten_plugin().torch_call(masked, {q, k, v, add}),
                   attention(q, k, v, everywhere, [](int64_t i, int64_t j) { return double((i * 6 + j) % 3) - 1; }), 13);
  // A key-padding mask broadcast over heads and queries, [B, 1, 1, L].
  Tensor pad(DType::Bool, Shape{1, 1, 1, 6});
  for (int64_t j = 0; j < 6; ++j) pad.mutable_data<bool>()[j] = j < 4;
  expect_attention(aten_plugin().torch_call(kOp + " in0=1x2x5x4 in1=1x2x6x4 in2=1x2x6x3 in3=1x1x1x6 arg4=0.0 arg5=False", {q, k, v, pad}),
                   attention(q, k, v, [](int64_t, int64_t j) { return j < 4; }, none), 13);
}

TEST(TorchCallAttention, AGivenScaleAndGroupedQueryHeads) {
  const Tensor q = random(Shape{1, 4, 5, 8}, 4), k = random(Shape{1, 2, 3, 8}, 5), v = random(Shape{1, 2, 3, 2}, 6);
  // Four query heads over two key heads; a scale of 0.25 given; E = 8 > 2L + 1 = 7.
  expect_attention(aten_plugin().torch_call(kOp + " in0=1x4x5x8 in1=1x2x3x8 in2=1x2x3x2 arg3=None arg4=0.0 arg5=False scale=0.25 enable_gqa=True",
                                            {q, k, v}),
                   attention(q, k, v, everywhere, none, 0.25), 8);
  EXPECT_THROW(aten_plugin().torch_call(kOp + " in0=1x4x5x8 in1=1x3x3x8 in2=1x3x3x2 arg3=None arg4=0.0 arg5=False enable_gqa=True",
                                        {q, random(Shape{1, 3, 3, 8}, 7), random(Shape{1, 3, 3, 2}, 8)}),
               Error);
}

// A ViT-sized head (E = 32, L = 64) at float16, as a fused GPU kernel takes it: q, k, v already
// float16 (autocast's projections made them so), the output rounded to float16.
TEST(TorchCallAttention, AtFloat16AMaskOffByOneFails) {
  auto half_values = [](Tensor t) {
    for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = half_to_float(float_to_half(t.data<float>()[i]));
    return t;
  };
  const Tensor q = half_values(random(Shape{1, 2, 64, 32}, 9)), k = half_values(random(Shape{1, 2, 64, 32}, 10)),
               v = half_values(random(Shape{1, 2, 64, 32}, 11));
  const std::string line = kOp + " in0=1x2x64x32 in1=1x2x64x32 in2=1x2x64x32 arg3=None arg4=0.0 arg5=True";
  auto output = [&](const Allowed& allowed, bool to_half) {
    const Expected e = attention(q, k, v, allowed, none);
    Tensor y(DType::Float32, Shape{1, 2, 64, 32});
    for (size_t i = 0; i < e.out.size(); ++i) {
      y.mutable_data<float>()[i] = to_half ? half_to_float(float_to_half(float(e.out[i]))) : float(e.out[i]);
    }
    return y;
  };
  auto side = [&](Tensor out) {
    LayerSide s;
    s.line = line, s.roles = {"out0"}, s.outputs = {std::move(out)};
    s.inputs = [&] { return std::vector<Tensor>{q, k, v}; };
    return s;
  };
  JudgeOptions o;
  o.precision = Precision::Fp16;
  const Allowed causal = [](int64_t i, int64_t j) { return j <= i; };
  const LayerVerdict ok = judge_layer("attn", side(output(causal, false)), side(output(causal, true)), true, o);
  EXPECT_NE(ok.state, State::Failed) << ok.reason;
  const LayerVerdict shifted =
      judge_layer("attn", side(output(causal, false)), side(output([](int64_t i, int64_t j) { return j <= i + 1; }, true)), true, o);
  EXPECT_EQ(shifted.state, State::Failed) << shifted.reason;
  EXPECT_EQ(shifted.defective(), Sides::B) << shifted.reason;
}

TEST(TorchCallAttention, DropoutIsRefused) {
  const Tensor q = random(Shape{1, 1, 2, 4}, 1);
  EXPECT_THROW(aten_plugin().torch_call(kOp + " in0=1x1x2x4 in1=1x1x2x4 in2=1x1x2x4 arg3=None arg4=0.1 arg5=False", {q, q, q}), Error);
}

}  // namespace
}  // namespace parity
