// The views and copies between a producer and its consumer (compare/view_chain.h): replayed on
// one side's own producer output, the input is checked against that side only; two chains are
// the same model code when they take the same elements to the same places, whatever the layouts.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "compare/dump_compare.h"
#include "compare/dump_reader.h"
#include "compare/view_chain.h"
#include "core/half.h"
#include "core/npy.h"
#include "support/test_support.h"

namespace parity {
namespace {

using nlohmann::json;

Tensor iota(std::vector<int64_t> dims, float scale = 1) {
  Tensor t(DType::Float32, Shape(dims));
  for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = float(i) * scale + 0.125f;
  return t;
}

// x.permute(0, 2, 3, 1) of a contiguous 1x2x3x4: strides (24, 4, 1, 12) over x's storage.
ViaStep permute_step() {
  ViaStep s;
  s.op = ".permute(0, 2, 3, 1)";
  s.view = true;
  s.base_shape = {1, 2, 3, 4}, s.base_strides = {24, 12, 4, 1};
  s.shape = {1, 3, 4, 2}, s.strides = {24, 4, 1, 12};
  return s;
}

Tensor permuted(const Tensor& x) {  // the same permute, written out
  Tensor y(DType::Float32, Shape({1, 3, 4, 2}));
  for (int64_t h = 0; h < 3; ++h)
    for (int64_t w = 0; w < 4; ++w)
      for (int64_t c = 0; c < 2; ++c) y.mutable_data<float>()[(h * 4 + w) * 2 + c] = x.data<float>()[c * 12 + h * 4 + w];
  return y;
}

TEST(ViewChain, AViewIsAGatherAndOneWrongElementIsNamed) {
  const Tensor x = iota({1, 2, 3, 4});
  Tensor y = permuted(x);
  const ViaCheck ok = check_via(x, y, {permute_step()});
  EXPECT_TRUE(ok.checked) << ok.why_not;
  EXPECT_EQ(ok.mismatch, "");
  y.mutable_data<float>()[5] += 0.25f;
  const ViaCheck bad = check_via(x, y, {permute_step()});
  EXPECT_TRUE(bad.checked);
  EXPECT_NE(bad.mismatch.find("at [0, 0, 2, 1]"), std::string::npos) << bad.mismatch;
  EXPECT_EQ(via_text({permute_step()}), ".permute(0, 2, 3, 1)");
}

TEST(ViewChain, ACastRoundsAsTheRunDidAndAWrongRoundingFails) {
  const Tensor x = iota({1, 2, 3, 4}, 0.3333333f);
  ViaStep cast;
  cast.op = ".to(torch.bfloat16)";
  cast.cast = "bfloat16";
  Tensor y = permuted(x);
  for (int64_t i = 0; i < y.numel(); ++i) y.mutable_data<float>()[i] = round_mantissa(y.data<float>()[i], 7);
  EXPECT_EQ(check_via(x, y, {permute_step(), cast}).mismatch, "");
  // One element 10% off: many bfloat16 units, not the cast's rounding.
  Tensor off = y;
  off.mutable_data<float>()[7] *= 1.1f;
  EXPECT_NE(check_via(x, off, {permute_step(), cast}).mismatch, "");
}

TEST(ViewChain, AChainThatDoesNotFitTheProducerIsNotChecked) {
  const Tensor x = iota({2, 12});
  const ViaCheck c = check_via(x, permuted(iota({1, 2, 3, 4})), {permute_step()});
  EXPECT_FALSE(c.checked);
  EXPECT_NE(c.why_not.find("1x2x3x4"), std::string::npos) << c.why_not;
  ViaStep wild = permute_step();
  wild.strides = {24, 4, 1, 1000000};  // reads storage no element of the producer is in
  EXPECT_FALSE(check_via(iota({1, 2, 3, 4}), permuted(iota({1, 2, 3, 4})), {wild}).checked);
}

TEST(ViewChain, TheSameViewInAnotherLayoutTakesTheSameElements) {
  // A channels-last producer (strides 24, 1, 8, 2) permuted the same way: other strides, the
  // same elements in the same places.
  ViaStep channels_last = permute_step();
  channels_last.base_strides = {24, 1, 8, 2};
  channels_last.strides = {24, 8, 2, 1};
  EXPECT_EQ(via_sources({1, 2, 3, 4}, {permute_step()}), via_sources({1, 2, 3, 4}, {channels_last}));
  // The other half of a chunk: other elements.
  ViaStep first, second;
  first.view = second.view = true;
  first.base_shape = second.base_shape = {1, 4, 3};
  first.base_strides = second.base_strides = {12, 3, 1};
  first.shape = second.shape = {1, 2, 3};
  first.strides = second.strides = {12, 3, 1};
  second.offset = 6;
  EXPECT_NE(via_sources({1, 4, 3}, {first}), via_sources({1, 4, 3}, {second}));
}

// A conv2d line that cannot give the output the dump holds (a subclass that pads in its own forward,
// recorded as the module's plain conv): a verdict, never a read outside the inputs (ASan in CI).
TEST(ViewChain, AConvLineThatCannotMakeItsOutputIsJudgedWithoutReadingPastItsInputs) {
  test::TempDir tmp;
  const Tensor x = iota({1, 3, 8, 8}, 0.01f), w = iota({4, 3, 3, 3}, 0.02f), b = iota({4}, 0.1f);
  auto dump_of = [&](const std::string& name, float shift) {
    const std::string dir = tmp.file(name);
    std::filesystem::create_directories(dir);
    write_npy(dir + "/x.npy", x), write_npy(dir + "/w.npy", w), write_npy(dir + "/b.npy", b);
    write_npy(dir + "/y.npy", iota({1, 4, 10, 10}, 1 + shift));
    test::write_bytes(dir + "/manifest.json", json::parse(R"({"format": "parity-dump", "version": 1, "layers": [
      {"name": "stem", "op": "conv2d", "params": "conv2d x=1x3x8x8 w=4x3x3x3 bias pad=1",
       "inputs": [{"role": "x", "file": "x.npy"}, {"role": "w", "file": "w.npy"}, {"role": "b", "file": "b.npy"}],
       "outputs": [{"file": "y.npy"}]}]})").dump());
    return read_dump(dir);
  };
  const CompareResult r = compare_dumps(dump_of("a", 0), dump_of("b", 1e-3f), CompareOptions{});
  ASSERT_EQ(r.layers.size(), 1u);
  EXPECT_EQ(r.layers[0].state, RowState::Origin) << r.layers[0].reason;
  EXPECT_EQ(r.layers[0].defective, Sides::Both) << r.layers[0].reason;
}

}  // namespace
}  // namespace parity
