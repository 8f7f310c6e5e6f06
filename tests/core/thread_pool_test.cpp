#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

namespace parity {
namespace {

TEST(ThreadPool, CoversEveryIndexOnce) {
  for (int64_t n : {0, 1, 7, 1000, 100003}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    parallel_for(n, 97, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[size_t(i)]++;
    });
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[size_t(i)].load(), 1) << i;
  }
}

TEST(ThreadPool, ChunksDependOnlyOnGrain) {
  std::vector<std::pair<int64_t, int64_t>> seen(size_t(chunk_count(1000, 64)));
  parallel_for(1000, 64, [&](int64_t b, int64_t e) { seen[size_t(b / 64)] = {b, e}; });
  for (size_t c = 0; c < seen.size(); ++c) {
    EXPECT_EQ(seen[c].first, int64_t(c) * 64);
    EXPECT_EQ(seen[c].second, std::min<int64_t>(1000, int64_t(c + 1) * 64));
  }
}

TEST(ThreadPool, RethrowsAndStaysUsable) {
  EXPECT_THROW(parallel_for(10000, 10,
                            [](int64_t b, int64_t) {
                              if (b == 500) throw std::runtime_error("chunk failed");
                            }),
               std::runtime_error);
  std::atomic<int64_t> sum{0};
  parallel_for(10000, 10, [&](int64_t b, int64_t e) { sum += e - b; });
  EXPECT_EQ(sum.load(), 10000);
}

TEST(ThreadPool, NestedLoopsRunSerially) {
  std::atomic<int64_t> sum{0};
  parallel_for(64, 1, [&](int64_t, int64_t) {
    parallel_for(100, 7, [&](int64_t b, int64_t e) { sum += e - b; });
  });
  EXPECT_EQ(sum.load(), 6400);
}

TEST(ThreadPool, ThreadCountIsSettable) {
  const int before = num_threads();
  set_num_threads(3);
  EXPECT_EQ(num_threads(), 3);
  std::atomic<int64_t> sum{0};
  parallel_for(1 << 20, 1 << 10, [&](int64_t b, int64_t e) { sum += e - b; });
  EXPECT_EQ(sum.load(), 1 << 20);
  set_num_threads(before);
}

}  // namespace
}  // namespace parity
