// Calls whose indices may pick among tied values (argsort, cummax, median, kthvalue), as the aten
// plugin checks a side's indices against the side's own input (kernels/aten/torch_dispatch.cpp
// tied_indices_check): every valid choice among ties passes, and an index that picks another
// value, repeats, lies after its position or breaks the order fails, saying which. And the bounds
// of products that cancel (cross), distances and losses, against values worked out by hand here,
// and a Fourier transform's, per transform, from the 2-norm of its output; a complex sum scaled by
// a negative number bounded by its terms' sizes.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "kernels/aten/plugin.h"

namespace parity {
namespace {

Tensor floats(const Shape& shape, const std::vector<float>& v) {
  Tensor t(DType::Float32, shape);
  for (size_t i = 0; i < v.size(); ++i) t.mutable_data<float>()[i] = v[i];
  return t;
}

Tensor longs(const Shape& shape, const std::vector<int64_t>& v) {
  Tensor t(DType::Int64, shape);
  for (size_t i = 0; i < v.size(); ++i) t.mutable_data<int64_t>()[i] = v[i];
  return t;
}

std::string tied(const std::string& line, const Tensor& x, const std::vector<Tensor>& outputs) {
  return aten_plugin().tied_indices(line, {x}, outputs);
}

TEST(TiedIndices, ArgsortAcceptsEitherOrderOfTiesAndNothingElse) {
  const Tensor x = floats({4}, {3, 1, 1, 2});
  const std::string line = "torch.argsort in0=4 arg1=-1";
  EXPECT_EQ(tied(line, x, {longs({4}, {1, 2, 3, 0})}), "");
  EXPECT_EQ(tied(line, x, {longs({4}, {2, 1, 3, 0})}), "");
  EXPECT_EQ(tied(line, x, {longs({4}, {1, 3, 2, 0})}), "its indices do not order its input");
  EXPECT_EQ(tied(line, x, {longs({4}, {1, 1, 3, 0})}), "an index appears twice");
  EXPECT_EQ(tied(line, x, {longs({4}, {1, 2, 3, 4})}), "an index is out of range");
  // stable: ties in the order of their indices only.
  EXPECT_EQ(tied(line + " stable=True", x, {longs({4}, {1, 2, 3, 0})}), "");
  EXPECT_NE(tied(line + " stable=True", x, {longs({4}, {2, 1, 3, 0})}), "");
  // sort(stable=True): its values and indices, ties in index order only.
  const Tensor sorted = floats({4}, {1, 1, 2, 3});
  EXPECT_EQ(tied("torch.sort in0=4 stable=True", x, {sorted, longs({4}, {1, 2, 3, 0})}), "");
  EXPECT_NE(tied("torch.sort in0=4 stable=True", x, {sorted, longs({4}, {2, 1, 3, 0})}), "");
  EXPECT_EQ(tied("torch.sort in0=4", x, {sorted, longs({4}, {2, 1, 3, 0})}), "");
  // Descending, NaN above every number.
  const Tensor n = floats({3}, {2, NAN, 5});
  EXPECT_EQ(tied("torch.argsort in0=3 arg1=0 descending=True", n, {longs({3}, {1, 2, 0})}), "");
  EXPECT_EQ(tied("torch.argsort in0=3 arg1=0 descending=True", n, {longs({3}, {2, 1, 0})}), "its indices do not order its input");
  EXPECT_EQ(tied("torch.argsort in0=3 arg1=0", n, {longs({3}, {0, 2, 1})}), "");
}

TEST(TiedIndices, CummaxTakesAnyTiedPositionUpToItsOwn) {
  const Tensor x = floats({4}, {1, 3, 3, 2});
  const Tensor values = floats({4}, {1, 3, 3, 3});
  const std::string line = "torch.cummax in0=4 arg1=0";
  EXPECT_EQ(tied(line, x, {values, longs({4}, {0, 1, 2, 2})}), "");
  EXPECT_EQ(tied(line, x, {values, longs({4}, {0, 1, 1, 1})}), "");
  EXPECT_EQ(tied(line, x, {values, longs({4}, {0, 2, 2, 2})}), "an index lies after its position");
  EXPECT_EQ(tied(line, x, {values, longs({4}, {0, 1, 2, 3})}), "its indices do not pick the values it returned");
}

TEST(TiedIndices, MedianAndKthvalueOverADimWithAndWithoutKeepdim) {
  const Tensor x = floats({2, 4}, {1, 2, 2, 5, NAN, 0, 1, 2});
  // median of [1 2 2 5] is 2 (at 1 or 2); of a row with NaN, NaN (at 0).
  const Tensor values = floats({2}, {2, NAN});
  EXPECT_EQ(tied("torch.median in0=2x4 arg1=1", x, {values, longs({2}, {2, 0})}), "");
  EXPECT_EQ(tied("torch.median in0=2x4 arg1=1", x, {values, longs({2}, {1, 0})}), "");
  EXPECT_EQ(tied("torch.median in0=2x4 arg1=1", x, {values, longs({2}, {0, 0})}), "its indices do not pick the values it returned");
  EXPECT_EQ(tied("torch.median in0=2x4 arg1=1 keepdim=True", x, {floats({2, 1}, {2, NAN}), longs({2, 1}, {1, 0})}), "");
  EXPECT_EQ(tied("torch.kthvalue in0=2x4 arg1=3 arg2=1", x, {floats({2}, {2, 2}), longs({2}, {1, 3})}), "");
  EXPECT_EQ(tied("torch.kthvalue in0=2x4 arg1=3 arg2=1", x, {floats({2}, {2, 2}), longs({2}, {1, 2})}),
            "its indices do not pick the values it returned");
  // median(x) of every element: one value, no indices to check.
  EXPECT_THROW(tied("torch.median in0=2x4", x, {floats({}, {2})}), Error);
}

TEST(TorchCallBounds, CrossIsBoundedByItsTwoProductsNotTheirDifference) {
  // a = b: every component cancels to 0; z = a_x b_y - a_y b_x = 2*3 - 3*2 has S = 12.
  const Tensor a = floats({1, 3}, {2, 3, 0}), b = floats({1, 3}, {2, 3, 0});
  const TorchCallResult r = aten_plugin().torch_call("torch.cross in0=1x3 in1=1x3 dim=-1", {a, b});
  ASSERT_EQ(r.bound_sums.size(), 1u);
  EXPECT_EQ(r.bound_terms[0], 2);
  const double* S = r.bound_sums[0].data<double>();
  EXPECT_EQ(S[0], 0.0);   // a_y b_z + a_z b_y
  EXPECT_EQ(S[1], 0.0);   // a_z b_x + a_x b_z
  EXPECT_EQ(S[2], 12.0);  // a_x b_y + a_y b_x
  for (int i = 0; i < 3; ++i) EXPECT_EQ(r.outputs[0].data<float>()[i], 0.0f);
}

TEST(TorchCallBounds, LossesByTheirReductionsName) {
  const Tensor x = floats({2, 3}, {0.5f, -1, 2, 0, 1, -3}), t = floats({2, 3}, {1, 1, 1, 0, 0, 0});
  // mse_loss, mean: (0.25 + 4 + 1 + 0 + 1 + 9) / 6; terms of one sign: S = |y|, K = 6.
  const TorchCallResult mse = aten_plugin().torch_call("torch.nn.functional.mse_loss in0=2x3 in1=2x3 size_average=None reduce=None reduction='mean'", {x, t});
  EXPECT_NEAR(mse.outputs[0].data<float>()[0], 15.25 / 6, 1e-6);
  EXPECT_EQ(mse.bound_terms[0], 6);
  EXPECT_NEAR(mse.bound_sums[0].data<double>()[0], 15.25 / 6, 1e-12);
  // reduction='sum' and 'none'.
  EXPECT_NEAR(aten_plugin().torch_call("torch.nn.functional.l1_loss in0=2x3 in1=2x3 reduction='sum'", {x, t}).outputs[0].data<float>()[0], 7.5, 1e-6);
  const TorchCallResult none = aten_plugin().torch_call("torch.nn.functional.l1_loss in0=2x3 in1=2x3 reduction='none'", {x, t});
  ASSERT_EQ(none.outputs[0].numel(), 6);
  EXPECT_EQ(none.bound_terms[0], 1);
  EXPECT_THROW(aten_plugin().torch_call("torch.nn.functional.l1_loss in0=2x3 in1=2x3 reduction='average'", {x, t}), Error);
  // cross_entropy over C = 3 classes of N = 2 rows, mean: -log_softmax at the labels, averaged.
  const Tensor labels = longs({2}, {2, 0});
  const TorchCallResult ce = aten_plugin().torch_call(
      "torch.nn.functional.cross_entropy in0=2x3 in1=2 weight=None size_average=None ignore_index=-100 reduce=None reduction='mean' label_smoothing=0.0",
      {x, labels});
  const double row0 = std::log(std::exp(0.5) + std::exp(-1.0) + std::exp(2.0)) - 2.0;
  const double row1 = std::log(std::exp(0.0) + std::exp(1.0) + std::exp(-3.0)) - 0.0;
  EXPECT_NEAR(ce.outputs[0].data<float>()[0], (row0 + row1) / 2, 1e-6);
  EXPECT_EQ(ce.bound_terms[0], 3 + 2 + 4);
  EXPECT_NEAR(ce.bound_sums[0].data<double>()[0], (row0 + row1) / 2 + 1, 1e-9);
  // kl_div, batchmean: the sum of t (log t - x) over the batch of 2, as F.kl_div divides it.
  const Tensor p = floats({2, 3}, {0.25f, 0.25f, 0.5f, 0, 0.5f, 0.5f});
  const TorchCallResult kl = aten_plugin().torch_call("torch.nn.functional.kl_div in0=2x3 in1=2x3 size_average=None reduce=None reduction='batchmean' log_target=False", {x, p});
  double sum = 0;
  for (int i = 0; i < 6; ++i) {
    const double pi = p.data<float>()[i], xi = x.data<float>()[i];
    if (pi > 0) sum += pi * (std::log(pi) - xi);
  }
  EXPECT_NEAR(kl.outputs[0].data<float>()[0], sum / 2, 1e-6);
}

// sinc far from 0 (x = 3000.25): its sin(pi x) is off by a rounding of pi x, over pi x, about one
// rounding absolute: S = 1 + |y|, not |x| + |y| (which passed a 5% error there); lgamma and digamma alike.
TEST(TorchCallBounds, MapsNearTheirZerosAreBoundedByOnePlusTheirOutput) {
  const Tensor x = floats({3}, {3000.25f, 0.5f, 1.0f});
  for (const char* op : {"torch.sinc", "torch.lgamma", "torch.digamma"}) {
    const TorchCallResult r = aten_plugin().torch_call(std::string(op) + " in0=3", {x});
    ASSERT_EQ(r.bound_sums.size(), 1u) << op;
    EXPECT_EQ(r.bound_terms[0], 4) << op;
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(r.bound_sums[0].data<double>()[i], 1.0 + std::fabs(r.outputs[0].data<float>()[i]), 1e-6 * r.bound_sums[0].data<double>()[i]) << op << " " << i;
  }
}

// rfft of 4 rows of 64 points, one row scaled 1000 times: the DFT written out here in float64. Each
// row's bound is its own (its full spectrum's 2-norm, by Parseval sqrt(64) times the row's), with
// K = 2 log2(64) + 8; a bin off by 5 times its size, far below the row's DC term, is beyond it.
TEST(TorchCallBounds, AFourierTransformIsBoundedPerTransformByItsNorm) {
  Tensor x(DType::Float32, {4, 64});
  for (int r = 0; r < 4; ++r) {
    for (int i = 0; i < 64; ++i) x.mutable_data<float>()[r * 64 + i] = float((r == 2 ? 1000 : 1) * (3 + std::sin(0.7 * i + r) + 0.1 * ((i * 7) % 5)));
  }
  const TorchCallResult t = aten_plugin().torch_call("torch.fft_rfft in0=4x64 arg1=None arg2=-1", {x});
  ASSERT_EQ(t.outputs.size(), 1u);
  ASSERT_EQ(t.outputs[0].shape(), (Shape{4, 33, 2}));
  EXPECT_EQ(t.bound_terms.at(0), 2 * 6 + 8);
  const double pi = std::acos(-1.0);
  for (int r = 0; r < 4; ++r) {
    double squares = 0;
    for (int i = 0; i < 64; ++i) squares += std::pow(double(x.data<float>()[r * 64 + i]), 2);
    const double norm = std::sqrt(64 * squares);  // the full spectrum's 2-norm
    for (int k = 0; k < 33; ++k) {
      double re = 0, im = 0;
      for (int i = 0; i < 64; ++i) {
        re += x.data<float>()[r * 64 + i] * std::cos(2 * pi * k * i / 64);
        im -= x.data<float>()[r * 64 + i] * std::sin(2 * pi * k * i / 64);
      }
      const int64_t at = (r * 33 + k) * 2;
      EXPECT_NEAR(t.outputs[0].data<double>()[at], re, 1e-9 * norm) << r << " " << k;
      EXPECT_NEAR(t.outputs[0].data<double>()[at + 1], im, 1e-9 * norm) << r << " " << k;
      // rfft's output is half the spectrum: its norm at most sqrt(2) times the half's, at least the full one's.
      EXPECT_GE(t.bound_sums[0].data<double>()[at], norm * (1 - 1e-9)) << r << " " << k;
      EXPECT_LE(t.bound_sums[0].data<double>()[at], norm * std::sqrt(2.0) * (1 + 1e-9)) << r << " " << k;
      if (k == 5 && r == 1) {
        // Off by 5 times the bin's size, in a row whose DC term is 64 times larger: beyond 22
        // roundings of float32 of the row's norm.
        EXPECT_GT(5 * std::hypot(re, im), 22 * std::ldexp(1.0, -24) * t.bound_sums[0].data<double>()[at]);
      }
    }
  }
}

// addmm(C, A, B, alpha=-1) on complex values (real views, the line's fields marked c) where C = A B:
// the result cancels to 0, and its bound's S is |C| + |A| |B|, not their difference.
TEST(TorchCallBounds, AComplexSumScaledByANegativeNumberIsBoundedByItsTermsSizes) {
  Tensor a(DType::Float32, {2, 3, 2}), b(DType::Float32, {3, 2, 2}), c(DType::Float32, {2, 2, 2});
  const float A[2][3] = {{1, 2, 3}, {4, 5, 6}}, B[3][2] = {{1, 2}, {3, 4}, {5, 6}};
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) a.mutable_data<float>()[(i * 3 + j) * 2] = A[i][j];
  }
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 2; ++j) b.mutable_data<float>()[(i * 2 + j) * 2] = B[i][j];
  }
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) {
      float sum = 0;
      for (int k = 0; k < 3; ++k) sum += A[i][k] * B[k][j];
      c.mutable_data<float>()[(i * 2 + j) * 2] = sum;
    }
  }
  const TorchCallResult r = aten_plugin().torch_call("torch.addmm in0=2x2x2c in1=2x3x2c in2=3x2x2c alpha=-1", {c, a, b});
  ASSERT_EQ(r.outputs.size(), 1u);
  ASSERT_EQ(r.bound_sums.size(), 1u);
  for (int64_t e = 0; e < 8; ++e) {
    EXPECT_EQ(r.outputs[0].data<float>()[e], 0.0f) << e;  // complex64 inputs: a complex64 result
    EXPECT_EQ(r.bound_sums[0].data<double>()[e], 2.0 * c.data<float>()[e / 2 * 2]) << e;  // |C| + |A||B| = 2 |C|
  }
}

}  // namespace
}  // namespace parity
