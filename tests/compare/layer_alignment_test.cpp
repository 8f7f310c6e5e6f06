// Pairing the layers of two dumps (compare/layer_alignment.h): by what they compute, in order,
// so a call on one side only (a warm-up's cached grid) shifts nothing; by name between such pairs
// (another call, a finding); reordered calls still pair; beyond the edit limit, by name alone.
#include "compare/layer_alignment.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <set>

namespace parity {
namespace {

std::vector<AlignedLayer> layers(const std::vector<std::pair<std::string, std::string>>& key_name) {
  std::vector<AlignedLayer> out;
  for (const auto& [k, n] : key_name) out.push_back({k, n});
  return out;
}

TEST(LayerAlignment, ACallOnOneSideOnlyShiftsNoPair) {
  // B is the cold run: it builds a grid (two calls) the warm run A took from its cache, and its
  // later mul is its second of the scope, so it has another name than A's twin.
  const auto a = layers({{"conv", "det.m.0"}, {"sigmoid", "det.sigmoid"}, {"mul x2", "det.mul"}, {"add", "det.add"}});
  const auto b = layers({{"conv", "det.m.0"}, {"arange", "det.arange"}, {"mul grid", "det.mul"}, {"sigmoid", "det.sigmoid"},
                         {"mul x2", "det.mul.1"}, {"add", "det.add"}});
  EXPECT_EQ(align_layers(a, b), (std::vector<int64_t>{0, 3, 4, 5}));
  std::vector<int64_t> reverse = align_layers(b, a);
  EXPECT_EQ(reverse, (std::vector<int64_t>{0, -1, -1, 1, 2, 3}));
}

TEST(LayerAlignment, AnotherCallBetweenPairsPairsByName) {
  const auto a = layers({{"conv k3", "stem"}, {"silu", "act"}, {"conv k1", "head"}});
  const auto b = layers({{"conv k3", "stem"}, {"relu", "act"}, {"conv k1", "head"}});
  EXPECT_EQ(align_layers(a, b), (std::vector<int64_t>{0, 1, 2}));
  // Names pair only inside their gap: "act" after "head" on B is not A's "act".
  const auto c = layers({{"conv k3", "stem"}, {"conv k1", "head"}, {"relu", "act"}});
  EXPECT_EQ(align_layers(a, c), (std::vector<int64_t>{0, -1, 1}));
}

TEST(LayerAlignment, CallsRunInAnotherOrderStillPair) {
  const auto a = layers({{"c1", "cv1"}, {"m", "m"}, {"c2", "cv2"}, {"cat", "cat"}});
  const auto b = layers({{"c2", "cv2"}, {"c1", "cv1"}, {"m", "m"}, {"cat", "cat"}});
  EXPECT_EQ(align_layers(a, b), (std::vector<int64_t>{1, 2, 0, 3}));
}

TEST(LayerAlignment, BeyondTheEditLimitLayersPairByName) {
  const auto a = layers({{"k1", "x"}, {"k2", "y"}, {"k3", "z"}});
  const auto b = layers({{"j1", "x"}, {"j2", "y"}, {"j3", "z"}, {"j4", "w"}});
  EXPECT_EQ(align_layers(a, b, 1), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(align_layers(a, b), (std::vector<int64_t>{0, 1, 2}));
}

// B is A with calls inserted that A never made (keys of their own, names that may repeat A's):
// every layer of A pairs with itself, and no B layer pairs twice.
RC_GTEST_PROP(LayerAlignment, InsertedCallsLeaveEveryOtherLayerPaired, ()) {
  const int n = *rc::gen::inRange(0, 60);
  std::vector<AlignedLayer> a, b;
  std::vector<int64_t> expected;
  for (int i = 0; i < n; ++i) {
    // Few distinct keys, so the diff has repeats to choose between.
    a.push_back({"k" + std::to_string(*rc::gen::inRange(0, 4)), "n" + std::to_string(i)});
  }
  for (int i = 0; i < n; ++i) {
    const int extra = *rc::gen::inRange(0, 3) == 0 ? *rc::gen::inRange(1, 4) : 0;
    for (int e = 0; e < extra; ++e) b.push_back({"grid" + std::to_string(e), "n" + std::to_string(*rc::gen::inRange(0, n))});
    expected.push_back(int64_t(b.size()));
    b.push_back(a[size_t(i)]);
  }
  const std::vector<int64_t> twin = align_layers(a, b);
  RC_ASSERT(twin == expected);
  std::set<int64_t> used;
  for (const int64_t j : twin) RC_ASSERT(j < 0 || used.insert(j).second);
}

// A number derived from each run's own type's finfo constant: the same multiple, power, or 1 plus a
// multiple. float16 1, bfloat16 2, float32 4, float64 8. Numbers that are no such derivation (a
// grid of 12 against one of 13, whose ratios to float64's tiny are past float64's range; a literal
// 1e-6 against 1e-2) are not.
TEST(LayerAlignment, NumbersDerivedFromEachRunsFinfoAndNoOthers) {
  EXPECT_TRUE(same_finfo_derivation(10 * 0x1p-23, 4, 10 * 0x1p-7, 2));          // eps * 10
  EXPECT_TRUE(same_finfo_derivation(1 - 0x1p-23, 4, 1 - 0x1p-7, 2));            // 1 - eps
  EXPECT_TRUE(same_finfo_derivation(-3.4028234663852886e38 / 2, 4, -0x1.fep127 / 2, 2));  // min / 2
  EXPECT_TRUE(same_finfo_derivation(std::sqrt(0x1p-23), 4, std::sqrt(0x1p-52), 8));      // eps ** 0.5
  EXPECT_FALSE(same_finfo_derivation(10 * 0x1p-23, 4, 100 * 0x1p-7, 2));        // another factor
  EXPECT_FALSE(same_finfo_derivation(10 * 0x1p-23, 4, 10 * 0x1p-7, 4));         // a type the run did not use
  EXPECT_FALSE(same_finfo_derivation(12, 4, 13, 12));
  EXPECT_FALSE(same_finfo_derivation(1e-6, 4, 1e-2, 2));
}

}  // namespace
}  // namespace parity
