#include <gtest/gtest.h>

#include <limits>

#include "core/dtype.h"
#include "core/error.h"
#include "core/shape.h"

namespace parity {
namespace {

TEST(DType, NamesSizesAndDescrs) {
  EXPECT_EQ(dtype_size(DType::Float16), 2u);
  EXPECT_EQ(dtype_size(DType::Float64), 8u);
  EXPECT_EQ(dtype_size(DType::Bool), 1u);
  EXPECT_EQ(dtype_npy_descr(DType::Int64), "<i8");
  EXPECT_EQ(dtype_npy_descr(DType::Bool), "|b1");
  for (DType dt : kAllDTypes) {
    EXPECT_EQ(dtype_from_name(dtype_name(dt)), dt);
    // Each storage type matches the dtype's size.
    visit_dtype(dt, [&](auto tag) { EXPECT_EQ(sizeof(tag), dtype_size(dt)) << dtype_name(dt); });
  }
  EXPECT_FALSE(dtype_from_name("complex64").has_value());
  EXPECT_TRUE(is_floating(DType::Float16));
  EXPECT_FALSE(is_floating(DType::UInt8));
}

TEST(Shape, StringRoundTrip) {
  for (const Shape& s : {Shape(), Shape{0}, Shape{32, 3, 640, 640}, Shape{1, 0, 7}, Shape{17, 19, 23, 1, 2, 3}}) {
    EXPECT_EQ(Shape::parse(s.str()), s) << s.str();
  }
  EXPECT_EQ(Shape({32, 3, 6, 6}).str(), "32x3x6x6");
  EXPECT_EQ(Shape().str(), "scalar");
  EXPECT_EQ(Shape().numel(), 1);
  EXPECT_EQ(Shape({4, 0, 5}).numel(), 0);
}

TEST(Shape, RefusesBadDimensions) {
  EXPECT_THROW(Shape({3, -1}), Error);
  EXPECT_THROW(Shape::parse("3x-1"), Error);
  EXPECT_THROW(Shape::parse("3xx4"), Error);
  EXPECT_THROW(Shape::parse("3x4x"), Error);
  EXPECT_THROW(Shape::parse(""), Error);
  EXPECT_THROW(Shape::parse("3x4 "), Error);
  // 2^32 * 2^32 leaves int64, even with a zero dimension after it.
  EXPECT_THROW(Shape({int64_t(1) << 32, int64_t(1) << 32, 0}), Error);
  const Shape big{int64_t(1) << 62};
  EXPECT_THROW(big.byte_size(4), Error);
  EXPECT_EQ(big.byte_size(1), int64_t(1) << 62);
}

}  // namespace
}  // namespace parity
