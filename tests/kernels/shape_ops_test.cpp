// cat, nonzero, index, maxpool2d, upsample_nearest2d: data movement and comparisons only, so the
// reference and LibTorch must agree bit for bit.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "kernel_test_util.h"
#include "kernels/cat/cat.h"
#include "kernels/index/index.h"
#include "kernels/maxpool2d/maxpool2d.h"

namespace parity {
namespace {

rc::Gen<DType> any_dtype() { return rc::gen::elementOf(kAllDTypes); }

std::string with_dtype(std::string line, DType dt, DType fallback) {
  return dt == fallback ? line : line + " dtype=" + std::string(dtype_name(dt));
}

RC_GTEST_PROP(Cat, RefEqualsAten, ()) {
  const Shape base = *test::tail_shape(1, 4);
  const auto dim = *rc::gen::inRange<int64_t>(-int64_t(base.rank()), int64_t(base.rank()));
  const auto d = size_t(dim < 0 ? dim + int64_t(base.rank()) : dim);
  const auto count = *rc::gen::inRange(1, 5);
  std::string xs;
  for (int i = 0; i < count; ++i) {
    std::vector<int64_t> dims = base.dims();
    dims[d] = *test::tail_dim();
    // torch's legacy empty tensor [0] may sit anywhere in the list.
    const bool legacy_empty = *rc::gen::weightedElement<bool>({{9, false}, {1, true}});
    xs += (i ? "," : "") + (legacy_empty ? std::string("0") : Shape(dims).str());
  }
  const DType dt = *any_dtype();
  const std::string line = with_dtype("cat x=" + xs + " dim=" + std::to_string(dim), dt, DType::Float32);
  test::assert_ref_equals_aten(line, test::seeded_inputs(line, *rc::gen::arbitrary<uint64_t>(), -100, 100));
}

RC_GTEST_PROP(Nonzero, RefEqualsAten, ()) {
  const Shape shape = *test::tail_shape(0, 5);
  const DType dt = *any_dtype();
  const std::string line = with_dtype("nonzero x=" + shape.str(), dt, DType::Bool);
  Tensor x(dt, shape);
  const RngStream rng(*rc::gen::arbitrary<uint64_t>(), line, 0);
  rng.fill_bernoulli(x, *rc::gen::element(0.0, 0.01, 0.3, 0.9, 1.0));
  // Floats: sprinkle -0.0 (zero) and NaN (nonzero) to check both rules.
  if (dt == DType::Float32) {
    float* p = x.mutable_data<float>();
    for (int64_t i = 0; i < x.numel(); i += 7) p[i] = (i % 2) ? -0.0f : NAN;
  }
  test::assert_ref_equals_aten(line, {x});
}

// Indices uniformly in [-size, size): negatives count from the end, as Python's.
Tensor indices(int64_t n, int64_t size, uint64_t seed, uint32_t stream) {
  Tensor t(DType::Int64, Shape{n});
  if (size > 0) RngStream(seed, "indices", stream).fill_uniform(t, double(-size), double(size));
  return t;
}

RC_GTEST_PROP(Index, MaskRefEqualsAten, ()) {
  const Shape x = *test::tail_shape(1, 4);
  const auto lead = *rc::gen::inRange<size_t>(1, x.rank() + 1);
  const Shape mask(std::vector<int64_t>(x.dims().begin(), x.dims().begin() + int64_t(lead)));
  const DType dt = *any_dtype();
  const std::string line = with_dtype("index x=" + x.str() + " mask=" + mask.str(), dt, DType::Float32);
  const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
  std::vector<Tensor> in = test::seeded_inputs(line, seed, -50, 50);
  RngStream(seed, line, 1).fill_bernoulli(in[1], *rc::gen::element(0.0, 0.05, 0.5, 1.0));
  test::assert_ref_equals_aten(line, in);
}

RC_GTEST_PROP(Index, SelectRefEqualsAten, ()) {
  const Shape x = *test::tail_shape(1, 4);
  const auto dim = *rc::gen::inRange<int64_t>(-int64_t(x.rank()), int64_t(x.rank()));
  const int64_t size = x[size_t(dim < 0 ? dim + int64_t(x.rank()) : dim)];
  const int64_t n = size == 0 ? 0 : *rc::gen::inRange<int64_t>(0, 40);
  const DType dt = *any_dtype();
  const std::string line =
      with_dtype("index x=" + x.str() + " idx=" + std::to_string(n) + (dim ? " dim=" + std::to_string(dim) : ""), dt,
                 DType::Float32);
  const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
  std::vector<Tensor> in = test::seeded_inputs(line, seed, -50, 50);
  in[1] = indices(n, size, seed, 1);
  test::assert_ref_equals_aten(line, in);
}

RC_GTEST_PROP(Index, PairsRefEqualsAten, ()) {
  const Shape x = *test::tail_shape(2, 4);
  const int64_t n = x[0] * x[1] == 0 ? 0 : *rc::gen::inRange<int64_t>(0, 60);
  const DType dt = *any_dtype();
  const std::string line = with_dtype("index x=" + x.str() + " pairs=" + std::to_string(n), dt, DType::Float32);
  const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
  std::vector<Tensor> in = test::seeded_inputs(line, seed, -50, 50);
  in[1] = indices(n, x[0], seed, 1);
  in[2] = indices(n, x[1], seed, 2);
  test::assert_ref_equals_aten(line, in);
}

TEST(Index, OutOfRangeIsAnErrorNamingTheIndex) {
  Tensor x(DType::Float32, Shape{4, 3}), idx(DType::Int64, Shape{2});
  idx.mutable_data<int64_t>()[1] = 4;
  for (const char* b : {"ref", "aten"}) {
    try {
      backend(b).run("index x=4x3 idx=2", {x, idx});
      ADD_FAILURE() << b;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("index: ", 0), 0u) << e.what();
      if (std::string(b) == "ref") {
        EXPECT_NE(std::string(e.what()).find("idx[1] = 4"), std::string::npos) << e.what();
      }
    }
  }
  idx.mutable_data<int64_t>()[1] = -5;
  EXPECT_THROW(backend("ref").run("index x=4x3 idx=2", {x, idx}), Error);
  EXPECT_THROW(IndexParams::parse("index x=4x3 mask=3"), Error);         // mask shape mismatch
  EXPECT_THROW(IndexParams::parse("index x=4x3 mask=4 idx=2"), Error);   // two modes
  EXPECT_THROW(IndexParams::parse("index x=4 pairs=2"), Error);          // rank 1
}

rc::Gen<std::string> maxpool_line() {
  return rc::gen::exec([] {
    Maxpool2dParams p;
    p.k_h = *rc::gen::element<int64_t>(1, 2, 3, 5);
    p.k_w = *rc::gen::weightedElement<int64_t>({{4, p.k_h}, {1, 3}});
    p.stride_h = *rc::gen::inRange<int64_t>(1, 4), p.stride_w = p.stride_h;
    p.pad_h = *rc::gen::inRange<int64_t>(0, p.k_h / 2 + 1), p.pad_w = std::min(p.pad_h, p.k_w / 2);
    p.dil_h = p.dil_w = *rc::gen::weightedElement<int64_t>({{5, 1}, {1, 2}});
    p.ceil = *rc::gen::arbitrary<bool>();
    const int64_t min_h = p.dil_h * (p.k_h - 1) + 1, min_w = p.dil_w * (p.k_w - 1) + 1;
    p.x = Shape{*rc::gen::element<int64_t>(1, 2), *rc::gen::element<int64_t>(1, 3, 17, 19),
                *rc::gen::inRange<int64_t>(min_h, min_h + 23), *rc::gen::inRange<int64_t>(min_w, min_w + 23)};
    p.validate();
    return p.str();
  });
}

RC_GTEST_PROP(Maxpool2d, RefEqualsAten, ()) {
  const std::string line = *maxpool_line();
  std::vector<Tensor> in = test::seeded_inputs(line, *rc::gen::arbitrary<uint64_t>(), -10, 10);
  if (*rc::gen::weightedElement<bool>({{9, false}, {1, true}})) in[0].mutable_data<float>()[0] = NAN;
  test::assert_ref_equals_aten(line, in);
}

TEST(Maxpool2d, SppfLineAndBadParameters) {
  const Maxpool2dParams p = Maxpool2dParams::parse("maxpool2d x=1x256x20x20 k=5 stride=1 pad=2");
  EXPECT_EQ(p.output_shape(), Shape({1, 256, 20, 20}));
  EXPECT_EQ(p.str(), "maxpool2d x=1x256x20x20 k=5 stride=1 pad=2");
  EXPECT_EQ(Maxpool2dParams::parse("maxpool2d x=1x1x9x9 k=3").str(), "maxpool2d x=1x1x9x9 k=3");
  EXPECT_THROW(Maxpool2dParams::parse("maxpool2d x=1x1x9x9 k=3 pad=2"), Error);  // pad > k/2
  EXPECT_THROW(Maxpool2dParams::parse("maxpool2d x=1x1x9x9 k=3 stride=0"), Error);
  EXPECT_THROW(Maxpool2dParams::parse("maxpool2d x=1x9x9 k=3"), Error);
}

RC_GTEST_PROP(UpsampleNearest2d, RefEqualsAten, ()) {
  const Shape x{*rc::gen::element<int64_t>(0, 1, 2), *rc::gen::element<int64_t>(1, 3, 17), *rc::gen::inRange<int64_t>(1, 24),
                *rc::gen::inRange<int64_t>(1, 24)};
  const int64_t sh = *rc::gen::element<int64_t>(1, 2, 2, 3, 4), sw = *rc::gen::weightedElement<int64_t>({{3, sh}, {1, 2}});
  const std::string line = "upsample_nearest2d x=" + x.str() + " scale=" + (sh == sw ? std::to_string(sh) : std::to_string(sh) + "x" + std::to_string(sw));
  test::assert_ref_equals_aten(line, test::seeded_inputs(line, *rc::gen::arbitrary<uint64_t>()));
}

TEST(Cat, TorchEmptyRulesAndBadShapes) {
  EXPECT_EQ(CatParams::parse("cat x=0,2x3,0 dim=1").output_shape(), Shape({2, 3}));
  EXPECT_EQ(CatParams::parse("cat x=0,0 dim=0").output_shape(), Shape({0}));
  EXPECT_EQ(CatParams::parse("cat x=2x0x4,2x3x4 dim=-2").output_shape(), Shape({2, 3, 4}));
  EXPECT_THROW(CatParams::parse("cat x=2x3,3x3 dim=1"), Error);
  EXPECT_THROW(CatParams::parse("cat x=2x3,2x3x1 dim=0"), Error);
  EXPECT_THROW(CatParams::parse("cat x=2x3 dim=2"), Error);
  EXPECT_THROW(CatParams::parse("cat x=2x3,2x3 dim=0 dtype=complex64"), Error);
}

}  // namespace
}  // namespace parity
