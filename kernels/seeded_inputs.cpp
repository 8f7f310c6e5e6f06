#include "kernels/seeded_inputs.h"

#include <algorithm>

#include "core/rng.h"
#include "kernels/backend.h"
#include "kernels/op_traits.h"

namespace parity {

namespace {

// Tensor k of `call` drawn from RngStream(seed, key, k).
std::vector<Tensor> seeded(const Call& call, std::string_view key, uint64_t seed, double density, std::optional<SeedRange> range) {
  const OpTraits& op = call.traits();
  std::vector<Tensor> out;
  uint32_t k = 0;
  for (const TensorSpec& s : call.inputs()) {
    Tensor t(s.dtype, s.shape);
    const RngStream rng(seed, key, k++);
    if (range) {
      const bool u8 = s.dtype == DType::UInt8;
      rng.fill_uniform(t, u8 ? std::max(range->lo, 0.0) : range->lo, u8 ? std::min(std::max(range->hi, 1.0), 256.0) : range->hi);
    } else if (op.seed_input && op.seed_input(call, s, rng, density, t)) {
      // the op's own fill
    } else if (s.dtype == DType::Bool) {
      rng.fill_bernoulli(t, density);
    } else if (is_floating(s.dtype)) {
      rng.fill_uniform(t, -1, 1);
    } else {
      rng.fill_uniform(t, s.dtype == DType::UInt8 ? 0 : -1000, s.dtype == DType::UInt8 ? 256 : 1000);
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

std::vector<Tensor> seeded_inputs(std::string_view line, uint64_t seed, double density, std::optional<SeedRange> range) {
  return seeded_inputs(Call(line), line, seed, density, range);
}

// A half call's inputs are its float32 twin's, rounded to its type: the streams are keyed by the
// line without `precision=`, so fp32, fp16 and bf16 replays of a case start from the same values.
std::vector<Tensor> seeded_inputs(const Call& call, std::string_view line, uint64_t seed, double density, std::optional<SeedRange> range) {
  const std::string key = line.find("precision=") == std::string_view::npos ? std::string(line) : with_half(line, HalfType::None);
  std::vector<Tensor> in = seeded(call, key, seed, density, range);
  round_floats(in, call.half());
  return in;
}

}  // namespace parity
