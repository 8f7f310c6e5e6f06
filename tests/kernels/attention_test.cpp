// torch 2's F.scaled_dot_product_attention as the aten plugin runs it again (kernels/aten/
// torch_dispatch.cpp attention_call), against attention written out here in plain loops: the
// weights of each query over its keys (causal, a boolean or an additive mask), their mix of the
// values, and the bound's sums (sum_j P_ij |v_j| at least) and terms (max(E, L) + 4).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
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
  std::vector<double> out, weighted_abs;  // [B, Lq, Ev], sum_j P_ij |v_j|
};

// q [B,Lq,E], k [B,L,E], v [B,L,Ev] (B: batch and heads together); allowed(i, j), additive(i, j).
template <class Allowed, class Additive>
Expected attention(const Tensor& q, const Tensor& k, const Tensor& v, Allowed allowed, Additive additive) {
  const int64_t B = q.shape()[0] * q.shape()[1], Lq = q.shape()[2], E = q.shape()[3], L = k.shape()[2], Ev = v.shape()[3];
  const float *Q = q.data<float>(), *K = k.data<float>(), *V = v.data<float>();
  Expected e;
  e.out.assign(size_t(B * Lq * Ev), 0), e.weighted_abs.assign(size_t(B * Lq * Ev), 0);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t i = 0; i < Lq; ++i) {
      std::vector<double> s(size_t(L), -INFINITY);
      double top = -INFINITY;
      for (int64_t j = 0; j < L; ++j) {
        if (!allowed(i, j)) continue;
        double dot = 0;
        for (int64_t c = 0; c < E; ++c) dot += double(Q[(b * Lq + i) * E + c]) * double(K[(b * L + j) * E + c]);
        s[size_t(j)] = dot / std::sqrt(double(E)) + additive(i, j);
        top = std::max(top, s[size_t(j)]);
      }
      double total = 0;
      for (double& x : s) total += (x = std::exp(x - top));
      for (int64_t j = 0; j < L; ++j) {
        const double p = s[size_t(j)] / total;
        for (int64_t c = 0; c < Ev; ++c) {
          e.out[size_t((b * Lq + i) * Ev + c)] += p * V[(b * L + j) * Ev + c];
          e.weighted_abs[size_t((b * Lq + i) * Ev + c)] += p * std::fabs(V[(b * L + j) * Ev + c]);
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

const char* kOp = "torch.nn.functional.scaled_dot_product_attention";

TEST(TorchCallAttention, PlainCausalAndMaskedAttentionAsWrittenOut) {
  const Tensor q = random(Shape{1, 2, 5, 4}, 1), k = random(Shape{1, 2, 6, 4}, 2), v = random(Shape{1, 2, 6, 3}, 3);
  const std::string shapes = std::string(kOp) + " in0=1x2x5x4 in1=1x2x6x4 in2=1x2x6x3";
  const auto everywhere = [](int64_t, int64_t) { return true; };
  const auto none = [](int64_t, int64_t) { return 0.0; };
  expect_attention(aten_plugin().torch_call(shapes + " arg3=None arg4=0.0 arg5=False", {q, k, v}), attention(q, k, v, everywhere, none), 10);
  // is_causal: query i sees keys 0..i (the mask's top-left corner, as PyTorch aligns it)
  expect_attention(aten_plugin().torch_call(shapes + " arg3=None arg4=0.0 arg5=True", {q, k, v}),
                   attention(q, k, v, [](int64_t i, int64_t j) { return j <= i; }, none), 10);
  Tensor keep(DType::Bool, Shape{5, 6}), add(DType::Float32, Shape{5, 6});
  for (int64_t i = 0; i < 30; ++i) {
    keep.mutable_data<bool>()[i] = i % 4 != 1;
    add.mutable_data<float>()[i] = float(i % 3) - 1;
  }
  const std::string masked = std::string(kOp) + " in0=1x2x5x4 in1=1x2x6x4 in2=1x2x6x3 in3=5x6 arg4=0.0 arg5=False";
  expect_attention(aten_plugin().torch_call(masked, {q, k, v, keep}),
                   attention(q, k, v, [](int64_t i, int64_t j) { return (i * 6 + j) % 4 != 1; }, none), 10);
  expect_attention(aten_plugin().torch_call(masked, {q, k, v, add}),
                   attention(q, k, v, everywhere, [](int64_t i, int64_t j) { return double((i * 6 + j) % 3) - 1; }), 10);
}

TEST(TorchCallAttention, DropoutIsRefused) {
  const Tensor q = random(Shape{1, 1, 2, 4}, 1);
  EXPECT_THROW(aten_plugin().torch_call(std::string(kOp) + " in0=1x1x2x4 in1=1x1x2x4 in2=1x1x2x4 arg3=None arg4=0.1 arg5=False", {q, q, q}),
               Error);
}

}  // namespace
}  // namespace parity
