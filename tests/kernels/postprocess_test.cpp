// Detect's decode and val.py's post-processing helpers (threshold, max_dim, argsort) against
// LibTorch.
//
// detect_decode tolerance, per element: 16 * u * (|ref| + a), u = 2^-24, with a = 2 * stride
// for the x, y columns and a = 0 otherwise. ATen's float32 chain has at most five roundings
// (sigmoid within ~2 ulp, *2 exact, +grid, *stride exact for powers of two, squaring, *anchor),
// each within u of its result; the x, y sums are formed at magnitude <= |grid| + 2, hence the
// absolute term. The reference rounds once from float64.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "kernel_test_util.h"
#include "kernels/op_line.h"
#include "kernels/detect_decode/detect_decode.h"

namespace parity {
namespace {

RC_GTEST_PROP(DetectDecode, RefMatchesAten, ()) {
  const int64_t stride = *rc::gen::element<int64_t>(8, 16, 32);
  const int64_t na = *rc::gen::element<int64_t>(1, 3), no = *rc::gen::element<int64_t>(5, 6, 85);
  std::string anchors;
  for (int64_t a = 0; a < 2 * na; ++a) anchors += (a ? "," : "") + std::to_string(*rc::gen::inRange(4, 400));
  const Shape x{*rc::gen::element<int64_t>(1, 2), na * no, *rc::gen::inRange<int64_t>(1, 21), *rc::gen::inRange<int64_t>(1, 21)};
  const std::string line = "detect_decode x=" + x.str() + " stride=" + std::to_string(stride) + " anchors=" + anchors;
  const std::vector<Tensor> in = test::seeded_inputs(line, *rc::gen::arbitrary<uint64_t>(), -8, 8);
  const Tensor ref = backend("ref").run(line, in)[0], aten = backend("aten").run(line, in)[0];
  test::assert_close(ref, aten,
                     [&](int64_t i) {
                       const double a = i % no < 2 ? 2.0 * double(stride) : 0.0;
                       return 16 * test::kU32 * (std::fabs(test::at_f(ref, i)) + a);
                     },
                     line);
}

TEST(DetectDecode, HandComputedCell) {
  // One anchor, no = 5, a 1x2 grid; x = 0 everywhere gives sigmoid 0.5:
  // xy = (1 + (ix - 0.5)) * 8, wh = 1 * anchor, objectness 0.5.
  const std::string line = "detect_decode x=1x5x1x2 stride=8 anchors=10,13";
  const Tensor y = backend("ref").run(line, {Tensor(DType::Float32, Shape{1, 5, 1, 2})})[0];
  ASSERT_EQ(y.shape(), Shape({1, 2, 5}));
  const float want[] = {4, 4, 10, 13, 0.5f, 12, 4, 10, 13, 0.5f};
  for (int i = 0; i < 10; ++i) EXPECT_EQ(y.data<float>()[i], want[i]) << i;
  EXPECT_THROW(DetectDecodeParams::parse("detect_decode x=1x255x8x8 stride=8 anchors=10,13,16"), Error);
  EXPECT_THROW(DetectDecodeParams::parse("detect_decode x=1x254x8x8 stride=8 anchors=10,13,16,30,33,23"), Error);
}

RC_GTEST_PROP(Threshold, RefEqualsAten, ()) {
  const Shape x = *test::tail_shape(1, 3);
  const double value = *rc::gen::element(0.001, 0.25, 0.5, 0.6);
  const std::string line = "threshold x=" + x.str() + " value=" + shortest_double(value);
  std::vector<Tensor> in = test::seeded_inputs(line, *rc::gen::arbitrary<uint64_t>(), 0, 1);
  // Values at the threshold itself (as float32) must not pass, on both sides.
  if (in[0].numel() > 0) in[0].mutable_data<float>()[0] = float(value);
  test::assert_ref_equals_aten(line, in);
}

RC_GTEST_PROP(MaxDim, RefEqualsAten, ()) {
  const Shape x = *test::tail_shape(1, 4);
  const auto dim = *rc::gen::inRange<int64_t>(-int64_t(x.rank()), int64_t(x.rank()));
  RC_PRE(x[size_t(dim < 0 ? dim + int64_t(x.rank()) : dim)] > 0);
  const bool keepdim = *rc::gen::arbitrary<bool>();
  const std::string line = "max_dim x=" + x.str() + " dim=" + std::to_string(dim) + (keepdim ? " keepdim" : "");
  // Few distinct values, so ties are common and the first-index rule is exercised.
  std::vector<Tensor> in = test::seeded_inputs(line, *rc::gen::arbitrary<uint64_t>(), -3, 3);
  float* p = in[0].mutable_data<float>();
  for (int64_t i = 0; i < in[0].numel(); ++i) p[i] = std::floor(p[i]);
  test::assert_ref_equals_aten(line, in);
}

RC_GTEST_PROP(Argsort, RefEqualsStableAten, ()) {
  const int64_t n = *rc::gen::inRange<int64_t>(0, 3000);
  const bool descending = *rc::gen::arbitrary<bool>();
  const std::string line = "argsort x=" + std::to_string(n) + (descending ? " descending" : "");
  std::vector<Tensor> in = test::seeded_inputs(line, *rc::gen::arbitrary<uint64_t>(), 0, 1);
  // Coarse scores make ties; a NaN checks that it sorts as the largest value.
  const double steps = *rc::gen::element(4.0, 100.0, 1e7);
  float* p = in[0].mutable_data<float>();
  for (int64_t i = 0; i < n; ++i) p[i] = float(std::floor(p[i] * steps) / steps);
  if (n > 3) p[n / 2] = NAN;
  test::assert_ref_equals_aten(line, in);
}

}  // namespace
}  // namespace parity
