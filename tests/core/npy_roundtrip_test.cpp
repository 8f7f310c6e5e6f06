// .npy write/read round trips over every dtype and random shapes (RapidCheck), bit-exact.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstring>
#include <filesystem>

#include "core/npy.h"
#include "support/test_support.h"

namespace parity {
namespace {

// A tensor of random dtype, rank 0..6 (zero-size dims included) and random bytes; bools hold 0/1.
rc::Gen<Tensor> arbitrary_tensor() {
  return rc::gen::exec([] {
    const DType dt = *rc::gen::elementOf(kAllDTypes);
    const auto rank = *rc::gen::inRange<size_t>(0, 7);
    std::vector<int64_t> dims;
    int64_t numel = 1;
    for (size_t i = 0; i < rank; ++i) {
      const int64_t d = *rc::gen::inRange<int64_t>(0, numel > 2000 ? 2 : 6);
      dims.push_back(d);
      numel *= d;
    }
    Tensor t(dt, Shape(dims));
    const auto bytes = *rc::gen::container<std::vector<uint8_t>>(t.nbytes(), rc::gen::arbitrary<uint8_t>());
    std::byte* p = t.mutable_bytes();
    for (size_t i = 0; i < bytes.size(); ++i) p[i] = std::byte(dt == DType::Bool ? bytes[i] & 1 : bytes[i]);
    return t;
  });
}

void expect_same(const Tensor& a, const Tensor& b) {
  RC_ASSERT(a.dtype() == b.dtype());
  RC_ASSERT(a.shape() == b.shape());
  RC_ASSERT(a.nbytes() == b.nbytes());
  RC_ASSERT(std::memcmp(a.bytes(), b.bytes(), a.nbytes()) == 0);
}

RC_GTEST_PROP(NpyRoundTrip, InMemory, ()) {
  const Tensor t = *arbitrary_tensor();
  const std::string image = encode_npy(t);
  // numpy's layout: a 64-byte aligned data offset and a '\n' closing the header.
  const size_t offset = image.size() - t.nbytes();
  RC_ASSERT(offset % 64 == 0);
  RC_ASSERT(image[offset - 1] == '\n');
  RC_ASSERT(image[6] == 1);  // version 1.0: every header here fits 16 bits
  expect_same(t, parse_npy(reinterpret_cast<const std::byte*>(image.data()), image.size(), "mem"));
}

RC_GTEST_PROP(NpyRoundTrip, ThroughFilesCopiedAndMapped, ()) {
  const Tensor t = *arbitrary_tensor();
  test::TempDir dir;
  write_npy(dir.file("t.npy"), t);
  NpyInfo copied, mapped;
  expect_same(t, read_npy(dir.file("t.npy"), {}, &copied));
  expect_same(t, read_npy(dir.file("t.npy"), NpyReadOptions{0}, &mapped));
  RC_ASSERT(!copied.mapped);
  RC_ASSERT(mapped.mapped);
  expect_same(t, read_npy_whole(dir.file("t.npy")));
}

// read_npy_whole over several pieces (1 MiB each): the same bytes as the mapping, and each piece
// shown once, in order, so a hash of the pieces is the hash of the data.
TEST(NpyReadWhole, PiecesCoverTheDataInOrder) {
  Tensor t(DType::Float32, Shape{3, 200001});  // 2.3 MiB: three pieces, the last one short
  float* p = t.mutable_data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = float(i) * 0.5f;
  test::TempDir dir;
  write_npy(dir.file("t.npy"), t);
  std::string seen;
  int pieces = 0;
  const Tensor r = read_npy_whole(dir.file("t.npy"), [&](const std::byte* b, size_t n) {
    seen.append(reinterpret_cast<const char*>(b), n);
    ++pieces;
  });
  EXPECT_EQ(pieces, 3);
  ASSERT_EQ(seen.size(), t.nbytes());
  EXPECT_EQ(std::memcmp(seen.data(), t.bytes(), t.nbytes()), 0);
  ASSERT_EQ(r.shape(), t.shape());
  EXPECT_EQ(std::memcmp(r.bytes(), t.bytes(), t.nbytes()), 0);
  EXPECT_TRUE(r.writable());
}

// Any prefix of a valid file is refused as truncated, never read or crashed on.
RC_GTEST_PROP(NpyRoundTrip, EveryTruncationIsRefused, ()) {
  const Tensor t = *arbitrary_tensor();
  const std::string image = encode_npy(t);
  const auto cut = *rc::gen::inRange<size_t>(0, image.size());
  try {
    parse_npy(reinterpret_cast<const std::byte*>(image.data()), cut, "cut.npy");
    RC_FAIL("a truncated file was accepted");
  } catch (const Error& e) {
    const std::string what = e.what();
    RC_ASSERT(what.find("cut.npy: ") == 0);
    RC_ASSERT(what.find("truncated") != std::string::npos || what.find("empty file") != std::string::npos ||
              what.find("malformed header") != std::string::npos);
  }
}

// Flipping any byte either yields a valid tensor or a parity::Error; nothing else escapes.
RC_GTEST_PROP(NpyRoundTrip, CorruptionNeverCrashes, ()) {
  const Tensor t = *arbitrary_tensor();
  std::string image = encode_npy(t);
  const auto at = *rc::gen::inRange<size_t>(0, image.size());
  image[at] = char(*rc::gen::arbitrary<uint8_t>());
  try {
    const Tensor r = parse_npy(reinterpret_cast<const std::byte*>(image.data()), image.size(), "bad.npy");
    RC_ASSERT(r.nbytes() <= image.size());
  } catch (const Error&) {
  }
}

TEST(NpyWrite, RefusesMoreDimensionsThanNumpyReads) {
  const Tensor ok(DType::Float32, Shape(std::vector<int64_t>(32, 1)));
  EXPECT_NO_THROW(encode_npy(ok));
  const Tensor too_many(DType::Float32, Shape(std::vector<int64_t>(33, 1)));
  test::TempDir dir;
  EXPECT_THROW(write_npy(dir.file("t.npy"), too_many), Error);
  EXPECT_FALSE(std::filesystem::exists(dir.file("t.npy")));
}

}  // namespace
}  // namespace parity
