#include "core/tensor.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/host_memory.h"
#include "core/mapped_file.h"
#include "core/npy.h"
#include "support/test_support.h"

namespace parity {
namespace {

TEST(Tensor, OwningIsZeroedAlignedAndTyped) {
  Tensor t(DType::Float32, Shape{3, 5});
  EXPECT_TRUE(t.defined());
  EXPECT_TRUE(t.writable());
  EXPECT_EQ(t.nbytes(), 60u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.bytes()) % 64, 0u);
  for (int i = 0; i < 15; ++i) EXPECT_EQ(t.data<float>()[i], 0.0f);
  EXPECT_THROW(t.data<double>(), Error);
  EXPECT_THROW(t.mutable_data<int32_t>(), Error);
  EXPECT_FALSE(Tensor().defined());
  EXPECT_THROW(Tensor().data<float>(), Error);
}

// Large buffers are kept for reuse when freed (core/host_memory.h): a tensor made in a kept
// buffer is still zero-filled, and what is kept stays under the cap.
TEST(Tensor, LargeBuffersAreReusedZeroedAndCapped) {
#ifdef __SANITIZE_ADDRESS__
  GTEST_SKIP() << "under AddressSanitizer freed buffers are not kept (core/host_memory.cpp)";
#endif
  // 7 huge pages: a size no other test keeps, so the buffer taken again is this one.
  const Shape shape{int64_t(kHugeBuffer / 4 * 6 + 1000)};
  const size_t before = kept_host_bytes();
  const std::byte* first = nullptr;
  {
    Tensor t(DType::Float32, shape);
    first = t.bytes();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % kHugeBuffer, 0u);
    std::memset(t.mutable_bytes(), 0xff, t.nbytes());
  }
  EXPECT_EQ(kept_host_bytes(), before + 7 * kHugeBuffer);
  {
    Tensor again(DType::Float32, shape);
    EXPECT_EQ(again.bytes(), first);
    EXPECT_EQ(kept_host_bytes(), before);
    for (int64_t i = 0; i < again.numel(); i += 997) ASSERT_EQ(again.data<float>()[i], 0.0f) << i;
  }
  {
    // Freed all at once, more than the cap: the rest goes back to the system. Never written, so
    // the pages are never touched.
    std::vector<Tensor> many;
    for (size_t held = 0; held <= kKeptBytes; held += 64 << 20) many.push_back(Tensor::uninitialized(DType::UInt8, Shape{64 << 20}));
  }
  EXPECT_LE(kept_host_bytes(), kKeptBytes);
  EXPECT_GT(kept_host_bytes(), kKeptBytes / 2);
}

TEST(Tensor, CopiesShareCloneDoesNot) {
  Tensor a(DType::Int32, Shape{4});
  Tensor b = a;
  b.mutable_data<int32_t>()[2] = 7;
  EXPECT_EQ(a.data<int32_t>()[2], 7);
  Tensor c = a.clone();
  c.mutable_data<int32_t>()[2] = 9;
  EXPECT_EQ(a.data<int32_t>()[2], 7);
  EXPECT_EQ(c.data<int32_t>()[2], 9);
}

TEST(Tensor, ZeroSizeHasUsableBase) {
  Tensor t(DType::Float64, Shape{2, 0, 3});
  EXPECT_EQ(t.numel(), 0);
  EXPECT_NE(t.bytes(), nullptr);
  EXPECT_EQ(t.clone().numel(), 0);
}

TEST(Tensor, MappedViewIsReadOnlyAndBounded) {
  test::TempDir dir;
  Tensor t(DType::Float32, Shape{256, 1024});  // 1 MiB: read_npy maps it by default
  for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = float(i % 1000);
  write_npy(dir.file("t.npy"), t);
  NpyInfo info;
  Tensor m = read_npy(dir.file("t.npy"), {}, &info);
  EXPECT_TRUE(info.mapped);
  EXPECT_TRUE(m.is_mapped());
  EXPECT_FALSE(m.writable());
  EXPECT_THROW(m.mutable_bytes(), Error);
  EXPECT_EQ(std::memcmp(m.bytes(), t.bytes(), t.nbytes()), 0);
  // A writable copy of a mapped tensor.
  Tensor c = m.clone();
  c.mutable_data<float>()[0] = -1;
  EXPECT_EQ(m.data<float>()[0], 0.0f);

  auto file = MappedFile::open(dir.file("t.npy"));
  EXPECT_THROW(Tensor::view(DType::Float32, Shape{256, 1025}, file, info.data_offset), Error);
  EXPECT_THROW(Tensor::view(DType::Float32, Shape{4}, file, 2), Error);  // misaligned
  EXPECT_THROW(MappedFile::open(dir.file("absent.npy")), Error);
  EXPECT_THROW(MappedFile::open(dir.path()), Error);  // a folder
}

// A mapped file cut short by another process: the read that meets the missing page ends the
// process with one line naming the file and exit code 3 (as the command line installs it), not
// a crash.
TEST(MappedFileDeathTest, ReadOfATruncatedMappingExitsWithOneLine) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  test::TempDir dir;
  const std::string path = dir.file("cut.bin");
  test::write_bytes(path, std::string(size_t(1) << 20, 'x'));
  EXPECT_EXIT(
      {
        exit_on_truncated_mapping(3);
        const auto file = MappedFile::open(path);
        if (::truncate(path.c_str(), 0) != 0) std::exit(1);
        volatile std::byte b = file->data()[size_t(1) << 19];
        (void)b;
        std::exit(0);
      },
      ::testing::ExitedWithCode(3), "cut\\.bin: file shrank while it was read");
}

}  // namespace
}  // namespace parity
