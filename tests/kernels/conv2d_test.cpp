// conv2d: the reference against LibTorch on random shapes with tails, and its parameter checks.
//
// Tolerance, per output element: |ref - aten| <= (K + 2) * u * S, where K = IC/groups*KH*KW is
// the reduction length, u = 2^-24 and S = sum |x*w| + |b| over the element's window. A float32
// sum of K terms in any order is within (K-1)*u*S of the exact value (Higham, recursive
// summation; blocked and pairwise orders do better); the reference is within u*S (exact
// products, float64 sum, one rounding). So a correct aten never exceeds the bound, while a
// wrong tap, padding or bias is off by O(|x*w|), far above it for these K.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstring>

#include "core/thread_pool.h"
#include "core/half.h"
#include "kernel_test_util.h"
#include "kernels/call.h"
#include "kernels/conv2d/conv2d.h"

namespace parity {
namespace {

Tensor abs_of(const Tensor& t) {
  Tensor a = t.clone();
  float* p = a.mutable_data<float>();
  for (int64_t i = 0; i < a.numel(); ++i) p[i] = std::fabs(p[i]);
  return a;
}

// A valid conv2d line with YOLOv5-like and tail sizes.
rc::Gen<std::string> conv2d_line() {
  return rc::gen::exec([] {
    const int64_t groups = *rc::gen::element<int64_t>(1, 1, 1, 2, 3);
    const int64_t icg = *rc::gen::element<int64_t>(1, 2, 3, 4, 8, 17, 19, 23);
    const int64_t ocg = *rc::gen::element<int64_t>(1, 2, 4, 16, 17, 19, 23);
    const int64_t kh = *rc::gen::element<int64_t>(1, 1, 3, 3, 5, 6, 2);
    const int64_t kw = *rc::gen::weightedElement<int64_t>({{8, kh}, {1, 1}, {1, 3}});
    const int64_t sh = *rc::gen::inRange<int64_t>(1, 4), sw = *rc::gen::weightedElement<int64_t>({{4, sh}, {1, 1}, {1, 2}});
    const int64_t ph = *rc::gen::inRange<int64_t>(0, 4), pw = *rc::gen::weightedElement<int64_t>({{4, ph}, {1, 0}});
    const int64_t dh = *rc::gen::weightedElement<int64_t>({{6, 1}, {1, 2}}), dw = dh;
    const int64_t min_h = std::max<int64_t>(1, dh * (kh - 1) + 1 - 2 * ph);
    const int64_t min_w = std::max<int64_t>(1, dw * (kw - 1) + 1 - 2 * pw);
    const int64_t h = *rc::gen::inRange<int64_t>(min_h, min_h + 20), w = *rc::gen::inRange<int64_t>(min_w, min_w + 20);
    const int64_t n = *rc::gen::weightedElement<int64_t>({{6, 1}, {2, 2}, {1, 3}, {1, 0}});
    const bool bias = *rc::gen::arbitrary<bool>();
    Conv2dParams p;
    p.x = Shape{n, icg * groups, h, w};
    p.w = Shape{ocg * groups, icg, kh, kw};
    p.bias = bias;
    p.stride_h = sh, p.stride_w = sw, p.pad_h = ph, p.pad_w = pw, p.dil_h = dh, p.dil_w = dw, p.groups = groups;
    p.validate();
    return p.str();
  });
}

RC_GTEST_PROP(Conv2d, RefMatchesAtenWithinTheReductionBound, ()) {
  const std::string line = *conv2d_line();
  const auto seed = *rc::gen::arbitrary<uint64_t>();
  RC_TAG(Conv2dParams::parse(line).bias ? "bias" : "no bias");
  const std::vector<Tensor> in = test::seeded_inputs(line, seed);
  const Tensor ref = backend("ref").run(line, in)[0];
  const Tensor aten = backend("aten").run(line, in)[0];

  const Conv2dParams p = Conv2dParams::parse(line);
  std::vector<Tensor> abs_in;
  for (const Tensor& t : in) abs_in.push_back(abs_of(t));
  const Tensor s = conv2d_ref(p, abs_in[0], abs_in[1], p.bias ? &abs_in[2] : nullptr);
  const double k = double(p.reduction_length());
  test::assert_close(ref, aten, [&](int64_t i) { return (k + 2) * test::kU32 * test::at_f(s, i); }, line);
}

// At bfloat16 (precision=bf16): the reference computes in float64 from the bfloat16 values and
// rounds once; LibTorch's CPU kernel (oneDNN) sums the exact products in float32 and rounds its
// result to bfloat16. They differ by at most the float32 sum's error and one bfloat16 unit.
RC_GTEST_PROP(Conv2d, RefMatchesAtensBfloat16KernelWithinTheBound, ()) {
  const std::string line = *conv2d_line() + " precision=bf16";
  const std::vector<Tensor> in = test::seeded_inputs(line, *rc::gen::arbitrary<uint64_t>());
  const Tensor ref = backend("ref").run(line, in)[0];
  const Tensor aten = backend("aten").run(line, in)[0];
  const Conv2dParams p = Conv2dParams::parse(with_half(line, HalfType::None));
  std::vector<Tensor> abs_in;
  for (const Tensor& t : in) abs_in.push_back(abs_of(t));
  const Tensor s = conv2d_ref(p, abs_in[0], abs_in[1], p.bias ? &abs_in[2] : nullptr);
  const double k = double(p.reduction_length());
  for (int64_t i = 0; i < ref.numel(); ++i) RC_ASSERT(round_to(ref.data<float>()[i], HalfType::Bf16) == ref.data<float>()[i]);
  test::assert_close(ref, aten, [&](int64_t i) { return (k + 2) * test::kU32 * test::at_f(s, i) + 0x1p-7 * std::fabs(test::at_f(ref, i)); },
                     line);
}

// The float64 entry point is the float32 one before rounding.
RC_GTEST_PROP(Conv2d, Float64EntryRoundsToTheFloat32One, ()) {
  const std::string line = *conv2d_line();
  const std::vector<Tensor> in = test::seeded_inputs(line, *rc::gen::arbitrary<uint64_t>());
  const Conv2dParams p = Conv2dParams::parse(line);
  const Tensor* b = p.bias ? &in[2] : nullptr;
  const Tensor r32 = conv2d_ref(p, in[0], in[1], b), r64 = conv2d_ref_f64(p, in[0], in[1], b);
  RC_ASSERT(r64.dtype() == DType::Float64);
  for (int64_t i = 0; i < r32.numel(); ++i) RC_ASSERT(r32.data<float>()[i] == float(r64.data<double>()[i]));
}

// The reference is deterministic: its tiling depends on the shape, never on the thread count.
TEST(Conv2d, SameBitsOnAnyThreadCount) {
  const std::string line = "conv2d x=2x19x37x41 w=23x19x3x3 bias stride=2 pad=1";
  const auto in = test::seeded_inputs(line, 7);
  const int before = num_threads();
  set_num_threads(1);
  const Tensor one = backend("ref").run(line, in)[0];
  set_num_threads(3);
  const Tensor three = backend("ref").run(line, in)[0];
  set_num_threads(before);
  ASSERT_EQ(one.nbytes(), three.nbytes());
  EXPECT_EQ(std::memcmp(one.bytes(), three.bytes(), one.nbytes()), 0);
}

TEST(Conv2d, HandComputedCase) {
  // 1x1x3x3 input 1..9, 2x2 kernel of ones, bias 0.5, pad 1, stride 2: windows at the corners.
  const std::string line = "conv2d x=1x1x3x3 w=1x1x2x2 bias stride=2 pad=1";
  Tensor x(DType::Float32, Shape{1, 1, 3, 3}), w(DType::Float32, Shape{1, 1, 2, 2}), b(DType::Float32, Shape{1});
  for (int i = 0; i < 9; ++i) x.mutable_data<float>()[i] = float(i + 1);
  for (int i = 0; i < 4; ++i) w.mutable_data<float>()[i] = 1;
  b.mutable_data<float>()[0] = 0.5f;
  const Tensor y = backend("ref").run(line, {x, w, b})[0];
  ASSERT_EQ(y.shape(), Shape({1, 1, 2, 2}));
  const float want[] = {1.5f, 5.5f, 11.5f, 28.5f};  // {1}, {2+3}, {4+7}, {5+6+8+9}
  for (int i = 0; i < 4; ++i) EXPECT_EQ(y.data<float>()[i], want[i]) << i;
}

TEST(Conv2d, LineRoundTripsAndBadParametersNameTheShapes) {
  const std::string line = "conv2d x=1x3x640x640 w=32x3x6x6 bias stride=2 pad=2";
  EXPECT_EQ(Conv2dParams::parse(line).str(), line);
  EXPECT_EQ(Conv2dParams::parse("conv2d   w=4x2x3x3 x=1x4x9x9 groups=2 stride=1 pad=1x1 dilation=1").str(),
            "conv2d x=1x4x9x9 w=4x2x3x3 pad=1 groups=2");
  EXPECT_EQ(Conv2dParams::parse(line).output_shape(), Shape({1, 32, 320, 320}));
  const std::pair<const char*, const char*> bad[] = {
      {"conv2d x=1x3x8x8 w=4x2x3x3", "channel mismatch"},
      {"conv2d x=1x3x8x8 w=4x3x3x3 stride=-1", "stride must be positive"},
      {"conv2d x=1x3x8x8 w=4x3x3x3 pad=-1", "padding"},
      {"conv2d x=1x4x8x8 w=3x2x3x3 groups=2", "divisible by groups"},
      {"conv2d x=1x3x2x2 w=4x3x5x5", "smaller than the dilated kernel"},
      {"conv2d x=3x8x8 w=4x3x3x3", "rank 4"},
      {"conv2d x=1x3x8x8 w=4x3x3x3 strid=2", "unknown field 'strid'"},
      {"conv2d x=1x3x8x8", "missing field w="},
      {"conv2d x=1x3x8x8 w=4x3x3x3 stride=two", "not an integer"},
  };
  for (const auto& [l, why] : bad) {
    try {
      Conv2dParams::parse(l);
      ADD_FAILURE() << l;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
  try {
    Conv2dParams::parse("conv2d x=1x3x8x8 w=4x2x3x3");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("x=1x3x8x8 w=4x2x3x3"), std::string::npos) << e.what();
  }
}

TEST(Conv2d, InputsThatDoNotMatchTheLineAreRefused) {
  const std::string line = "conv2d x=1x3x8x8 w=4x3x3x3 bias";
  auto in = test::seeded_inputs(line, 1);
  in[2] = Tensor(DType::Float32, Shape{5});
  EXPECT_THROW(backend("ref").run(line, in), Error);
  EXPECT_THROW(backend("aten").run(line, in), Error);
  EXPECT_THROW(backend("ref").run(line, {in[0], in[1]}), Error);
}

}  // namespace
}  // namespace parity
