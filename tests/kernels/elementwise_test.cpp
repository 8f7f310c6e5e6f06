// silu, sigmoid and add: the float64 reference against LibTorch's float32/float64 kernels.
//
// Tolerance: |ref - aten| <= 8 * eps * |ref| + tiny, eps = 2^-24 for float32 and 2^-53 for
// float64. ATen evaluates exp in the working precision (within ~1 ulp) followed by an add and
// a division (0.5 ulp each); the reference is correctly rounded from float64. 8 ulp covers the
// sum with margin. "tiny" covers x so negative that exp(-x) overflows the working precision
// (x < -88.72 in float32, -709.78 in float64): ATen then returns -0 for silu where the true
// value is at most 88.72*e^-88.72 = 2.7e-37 (float64: 709.78*e^-709.78 = 4e-306).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstring>

#include "core/half.h"
#include "kernel_test_util.h"
#include "kernels/add/add.h"
#include "kernels/sigmoid/sigmoid.h"
#include "kernels/silu/silu.h"

namespace parity {
namespace {

rc::Gen<std::string> unary_line(const std::string& op) {
  return rc::gen::exec([op] {
    const auto rank = *rc::gen::inRange<size_t>(0, 5);
    std::vector<int64_t> dims;
    for (size_t i = 0; i < rank; ++i) dims.push_back(*rc::gen::element<int64_t>(0, 1, 3, 17, 19, 23, 64));
    const bool f64 = *rc::gen::arbitrary<bool>();
    return op + " x=" + Shape(dims).str() + (f64 ? " dtype=float64" : "");
  });
}

void check_unary(const std::string& line, uint64_t seed, double range) {
  const std::vector<Tensor> in = test::seeded_inputs(line, seed, -range, range);
  const Tensor ref = backend("ref").run(line, in)[0];
  const Tensor aten = backend("aten").run(line, in)[0];
  const bool f64 = ref.dtype() == DType::Float64;
  const double eps = f64 ? 0x1p-53 : 0x1p-24, tiny = f64 ? 4e-306 : 2.8e-37;
  test::assert_close(ref, aten, [&](int64_t i) { return 8 * eps * std::fabs(test::at_f(ref, i)) + tiny; }, line);
}

RC_GTEST_PROP(Silu, RefMatchesAten, ()) {
  check_unary(*unary_line("silu"), *rc::gen::arbitrary<uint64_t>(), *rc::gen::element(1.0, 8.0, 90.0, 200.0));
}

RC_GTEST_PROP(Sigmoid, RefMatchesAten, ()) {
  check_unary(*unary_line("sigmoid"), *rc::gen::arbitrary<uint64_t>(), *rc::gen::element(1.0, 8.0, 90.0, 200.0));
}

// A correctly rounded sum is the same in every implementation: exact equality, every dtype,
// integers wrapping around.
RC_GTEST_PROP(Add, RefEqualsAtenExactly, ()) {
  const Shape shape = *test::tail_shape(0, 4);
  const auto dt = *rc::gen::element(DType::Float32, DType::Float64, DType::Int32, DType::Int64);
  const std::string line = "add x=" + shape.str() + (dt == DType::Float32 ? "" : " dtype=" + std::string(dtype_name(dt)));
  // Integers over (nearly) their whole range, so sums overflow and must wrap alike.
  const double range = dt == DType::Int32 ? 2147483648.0 : dt == DType::Int64 ? 4e18 : 1e3;
  test::assert_ref_equals_aten(line, test::seeded_inputs(line, *rc::gen::arbitrary<uint64_t>(), -range, range));
}

// At bfloat16 (precision=bf16): the reference rounds its float64 result once to bfloat16;
// LibTorch's CPU kernels round on the way too (its silu is two bfloat16 units off at -0.06), so
// the two agree within torch.testing's bfloat16 tolerance (atol 1e-5, rtol 1.6e-2), the bf16
// profile's, and both hold bfloat16 values.
RC_GTEST_PROP(Elementwise, RefMatchesAtensBfloat16KernelsWithinTheProfile, ()) {
  const std::string op = *rc::gen::element<std::string>("silu", "sigmoid", "add");
  const std::string line = op + " x=" + (*test::tail_shape(0, 4)).str() + " precision=bf16";
  const std::vector<Tensor> in = test::seeded_inputs(line, *rc::gen::arbitrary<uint64_t>(), -8, 8);
  const Tensor ref = backend("ref").run(line, in)[0];
  const Tensor aten = backend("aten").run(line, in)[0];
  for (const Tensor* t : {&ref, &aten}) {
    for (int64_t i = 0; i < t->numel(); ++i) RC_ASSERT(round_to(t->data<float>()[i], HalfType::Bf16) == t->data<float>()[i]);
  }
  test::assert_close(ref, aten, [&](int64_t i) { return 1.6e-2 * std::fabs(test::at_f(ref, i)) + 1e-5; }, line);
}

// Zeros, infinities and NaN give what ATen gives, bit for bit (sign of zero included).
TEST(Silu, SpecialValuesMatchAten) {
  for (const char* op : {"silu", "sigmoid"}) {
    Tensor x(DType::Float32, Shape{5});
    const float v[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN};
    std::copy(v, v + 5, x.mutable_data<float>());
    const std::string line = std::string(op) + " x=5";
    const Tensor r = backend("ref").run(line, {x})[0], a = backend("aten").run(line, {x})[0];
    for (int i = 0; i < 5; ++i) {
      const float ri = r.data<float>()[i], ai = a.data<float>()[i];
      EXPECT_TRUE((std::isnan(ri) && std::isnan(ai)) || std::memcmp(&ri, &ai, 4) == 0)
          << op << "(" << v[i] << "): ref " << ri << ", aten " << ai;
    }
  }
  EXPECT_THROW(backend("ref").run("silu x=5 dtype=int64", {Tensor(DType::Int64, Shape{5})}), Error);
}

}  // namespace
}  // namespace parity
