#pragma once
// The one seeded-input generator: replay, bench, golden and the tests all draw a call's inputs
// here. Input k of `line` comes from its own Philox stream (core/rng.h: seed, the line, k), filled
// as the op's traits say (OpTraits::seed_input: valid boxes for nms, indices in range for index,
// PyTorch's init for conv2d weights), else by dtype: floats uniform in [-1, 1), bools
// Bernoulli(density), uint8 uniform in [0, 256), other integers uniform in [-1000, 1000).
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/tensor.h"
#include "kernels/call.h"

namespace parity {

// A range that replaces every fill: all inputs uniform in [lo, hi) (bools p = 0.5; uint8 takes
// the part of the range in [0, 256)). Property tests use it to sweep value ranges.
struct SeedRange {
  double lo = -1, hi = 1;
};

// The line as the caller wrote it keys the streams (core/rng.h), so the inputs stay what they
// were for every case file and golden pack. Throws parity::Error for a bad line.
std::vector<Tensor> seeded_inputs(std::string_view line, uint64_t seed, double density = 0.5,
                                  std::optional<SeedRange> range = std::nullopt);
// The same for a call already read from `line`: tensor k is drawn from RngStream(seed, line, k).
std::vector<Tensor> seeded_inputs(const Call& call, std::string_view line, uint64_t seed, double density = 0.5,
                                  std::optional<SeedRange> range = std::nullopt);

}  // namespace parity
