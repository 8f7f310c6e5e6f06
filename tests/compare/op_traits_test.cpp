// Every op, from what its own folder declares (kernels/op_traits.h), so an op added there is
// tested with no edit here: each example line reads back to itself, runs on the reference, on
// LibTorch and (with a GPU) on the project's CUDA kernels, and the judge passes LibTorch and CUDA
// against the reference; each planted defect of the op fails the judge on the examples it applies
// to, unless it gives another correct answer, which must pass.
#include <gtest/gtest.h>

#include <cmath>

#include "compare/judge.h"
#include "compare/tolerance.h"
#include "kernels/backend.h"
#include "kernels/conv2d/conv2d.h"
#include "kernels/op_traits.h"
#include "kernels/seeded_inputs.h"

namespace parity {
namespace {

// The judge's verdict on `actual` against `expected`, output by output: the first failure, or "".
std::string judged(const std::string& line, const std::vector<Tensor>& in, const std::vector<Tensor>& expected,
                   const std::vector<Tensor>& actual) {
  if (expected.size() != actual.size()) return "output counts differ";
  const Call call(line);
  for (size_t k = 0; k < expected.size(); ++k) {
    const Tolerance tol = tolerance_for(call, k, expected[k].dtype(), in, precision_profile(Precision::Fp32));
    const TensorDiff d = judge_output(call, k, in, expected[k], actual[k], tol);
    if (d.state == State::Failed) return "out" + std::to_string(k) + ": " + d.reason;
  }
  return "";
}

TEST(OpTraits, EveryOpsExamplesPassOnEveryBackendHere) {
  ASSERT_FALSE(op_table().empty());
  int cuda_runs = 0;
  for (const OpTraits& op : op_table()) {
    SCOPED_TRACE(op.name);
    ASSERT_FALSE(op.examples.empty()) << op.name << " declares no example line";
    EXPECT_TRUE(op.ref) << op.name << " has no reference";
    for (const std::string& line : op.examples) {
      SCOPED_TRACE(line);
      EXPECT_EQ(Call(line).line(), line);
      EXPECT_EQ(op_traits_of(line).name, op.name);
      const std::vector<Tensor> in = seeded_inputs(line, 1);
      const std::vector<Tensor> ref = backend("ref").run(line, in);
      ASSERT_FALSE(ref.empty());
      for (const char* other : {"aten", "cuda"}) {
        const Backend& b = backend(other);
        if (!b.unavailable_reason().empty()) continue;  // cuda without a GPU: parity_cuda_tests says so
        ASSERT_TRUE(b.supports(op.name)) << other;
        EXPECT_EQ(judged(line, in, ref, b.run(line, in)), "") << other;
        cuda_runs += std::string(other) == "cuda";
      }
    }
  }
  if (cuda_runs == 0) std::printf("note: no CUDA backend here (%s): only ref and aten ran\n", backend("cuda").unavailable_reason().c_str());
}

TEST(OpTraits, EveryDefectFailsTheJudgeUnlessItIsAnotherCorrectAnswer) {
  int struck = 0;
  for (const OpTraits& op : op_table()) {
    for (const Defect& d : op.defects) {
      SCOPED_TRACE(op.name + " " + d.name);
      // The defect is found by its name through the backend, as a user names it.
      const Backend& faulty = backend("faulty:" + d.name);
      bool applied = false;
      for (const std::string& line : op.examples) {
        const std::vector<Tensor> in = seeded_inputs(line, 1);
        if (!d.applies(Call(line), in)) continue;
        applied = true;
        faulty.begin_run();
        const std::string verdict = judged(line, in, backend("ref").run(line, in), faulty.run(line, in));
        if (d.gives == Defect::Gives::CorrectAnswer) {
          EXPECT_EQ(verdict, "") << line;
        } else {
          EXPECT_NE(verdict, "") << line << ": the judge passed a planted defect";
        }
        ++struck;
      }
      EXPECT_TRUE(applied) << "no example of " << op.name << " that " << d.name << " applies to";
    }
  }
  EXPECT_GT(struck, 0);
}

}  // namespace
}  // namespace parity

namespace parity {
namespace {

// An op that gives its dot products across channels at once (conv2d gathers each window once)
// gives the same scales as element by element: grouped, depthwise, strided, dilated and padded
// windows, with and without bias. The sums may be reordered, so they agree to float64 rounding.
// conv2d's dot-product scales, element by element and across channels, against the plain sums
// over each output element's receptive field written out here from the definition of a
// convolution (x indexed by the input pixel each tap lands on; taps in the padding skipped).
// Every 41st input is made one that float16 would round on its subnormal grid (1e-6: below
// 2^-14, off the 2^-24 steps), so that windows with and without such inputs are both met; the
// sums of |w| and w^2 over those inputs' taps are checked too.
TEST(OpTraits, ConvDotProductScalesMatchTheirDefinition) {
  for (const char* line : {"conv2d x=2x8x9x11 w=6x4x3x3 bias stride=2 pad=1 groups=2",
                           "conv2d x=1x6x7x7 w=6x1x3x3 pad=2 dilation=2 groups=6", "conv2d x=1x5x6x4 w=7x5x1x1 bias"}) {
    SCOPED_TRACE(line);
    const Call call(line);
    const Conv2dParams p = call.params<Conv2dParams>();
    std::vector<Tensor> in = seeded_inputs(line, 3);
    in[0] = in[0].clone();
    for (int64_t i = 0; i < in[0].numel(); i += 41) in[0].mutable_data<float>()[i] = i % 2 ? 1e-6f : -1e-6f;
    const auto on_half_grid = [](double v) { return std::fabs(v) >= 0x1p-14 || v * 0x1p24 == std::nearbyint(v * 0x1p24); };
    const DotProducts d = call.traits().dot_products(call, in);
    ASSERT_TRUE(d.across_channels);
    int64_t windows_rounding = 0, windows_not = 0;
    const int64_t N = d.shape[0], OC = d.shape[1], OH = d.shape[2], OW = d.shape[3];
    const int64_t C = p.x[1], H = p.x[2], W = p.x[3], Cg = p.w[1], KH = p.w[2], KW = p.w[3];
    const float *x = in[0].data<float>(), *w = in[1].data<float>();
    std::vector<DotScales> across(static_cast<size_t>(OC));
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t oh = 0; oh < OH; ++oh) {
        for (int64_t ow = 0; ow < OW; ++ow) {
          const int64_t q = (n * OH + oh) * OW + ow;
          d.across_channels(q, across.data());
          for (int64_t oc = 0; oc < OC; ++oc) {
            DotScales want;
            if (p.bias) want.exact = in[2].data<float>()[oc], want.abs_sum = std::fabs(want.exact);
            const int64_t first_channel = oc / (OC / p.groups) * Cg;
            for (int64_t c = 0; c < Cg; ++c) {
              for (int64_t kh = 0; kh < KH; ++kh) {
                for (int64_t kw = 0; kw < KW; ++kw) {
                  const int64_t ih = oh * p.stride_h + kh * p.dil_h - p.pad_h, iw = ow * p.stride_w + kw * p.dil_w - p.pad_w;
                  if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                  const double xv = x[((n * C + first_channel + c) * H + ih) * W + iw], wv = w[((oc * Cg + c) * KH + kh) * KW + kw];
                  const double t = xv * wv;
                  want.exact += t, want.abs_sum += std::fabs(t), want.sum_sq += t * t;
                  if (!on_half_grid(xv)) want.weight_abs_sum += std::fabs(wv), want.weight_sq += wv * wv;
                }
              }
            }
            const DotScales one = d.scales(((n * OC + oc) * OH + oh) * OW + ow), &all = across[static_cast<size_t>(oc)];
            for (const DotScales* got : {&one, &all}) {
              EXPECT_NEAR(got->abs_sum, want.abs_sum, 1e-13 * want.abs_sum) << q << " " << oc;
              EXPECT_NEAR(got->sum_sq, want.sum_sq, 1e-13 * want.sum_sq) << q << " " << oc;
              EXPECT_NEAR(got->exact, want.exact, 1e-13 * want.abs_sum) << q << " " << oc;
              EXPECT_NEAR(got->weight_abs_sum, want.weight_abs_sum, 1e-13 * want.weight_abs_sum) << q << " " << oc;
              EXPECT_NEAR(got->weight_sq, want.weight_sq, 1e-13 * want.weight_sq) << q << " " << oc;
            }
            (want.weight_abs_sum > 0 ? windows_rounding : windows_not) += 1;
            EXPECT_GT(want.abs_sum, 0) << q << " " << oc;  // the window is not all padding here
          }
        }
      }
    }
    EXPECT_GT(windows_rounding, 0);
    EXPECT_GT(windows_not, 0);
  }
}

}  // namespace
}  // namespace parity

namespace parity {
namespace {

// An op that gives its dot products across channels at once (conv2d gathers each window once)
// gives the same scales as element by element: grouped, depthwise, strided, dilated and padded
// windows, with and without bias. The sums may be reordered, so they agree to float64 rounding.
TEST(OpTraits, DotProductsAcrossChannelsMatchElementByElement) {
  for (const char* line : {"conv2d x=2x8x9x11 w=6x4x3x3 bias stride=2 pad=1 groups=2",
                           "conv2d x=1x6x7x7 w=6x1x3x3 pad=2 dilation=2 groups=6", "conv2d x=1x5x6x4 w=7x5x1x1 bias"}) {
    SCOPED_TRACE(line);
    const Call call(line);
    const std::vector<Tensor> in = seeded_inputs(line, 3);
    const DotProducts d = call.traits().dot_products(call, in);
    ASSERT_TRUE(d.across_channels);
    const int64_t OC = d.shape[1], OHW = d.shape[2] * d.shape[3];
    std::vector<DotScales> across(static_cast<size_t>(OC));
    for (int64_t q = 0; q < d.shape[0] * OHW; ++q) {
      d.across_channels(q, across.data());
      for (int64_t oc = 0; oc < OC; ++oc) {
        const DotScales one = d.scales(((q / OHW) * OC + oc) * OHW + q % OHW);
        const DotScales& all = across[static_cast<size_t>(oc)];
        EXPECT_NEAR(all.abs_sum, one.abs_sum, 1e-13 * one.abs_sum) << q << " " << oc;
        EXPECT_NEAR(all.sum_sq, one.sum_sq, 1e-13 * one.sum_sq) << q << " " << oc;
        EXPECT_NEAR(all.exact, one.exact, 1e-13 * one.abs_sum) << q << " " << oc;
      }
    }
  }
}

}  // namespace
}  // namespace parity
