#pragma once
// Seeded data that is bit-identical on every machine, compiler and thread count.
//
// The generator is Philox4x32-10 (Salmon et al., SC'11; also cuRAND's and PyTorch's CUDA
// generator): a pure function of a 128-bit counter and a 64-bit key, so element i of a tensor is
// computed from i alone, in any order, on any thread.
//
// A stream is one tensor's key: XXH64 over (case id bytes, tensor index as 4 little-endian
// bytes) with the seed as XXH64's seed. Each (seed, case, tensor) therefore has its own stream,
// and adding a tensor to a case never shifts the values of the others. Element i uses the
// counter (i mod 2^32, i div 2^32, 0, 0) and consumes as many of its four output words as it
// needs, so each element's value is independent of the dtype's word usage elsewhere.
//
// Changing any of this changes every seeded input, and with them recorded golden data.
#include <array>
#include <cstdint>
#include <string_view>

#include "core/tensor.h"

namespace parity {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key);

class RngStream {
 public:
  RngStream(uint64_t seed, std::string_view case_id, uint32_t tensor_index);
  explicit RngStream(uint64_t key) : key_{uint32_t(key), uint32_t(key >> 32)} {}

  uint64_t key() const { return uint64_t(key_[1]) << 32 | key_[0]; }

  // The four Philox words of element i.
  PhiloxCounter block(uint64_t i) const {
    return philox4x32_10({uint32_t(i), uint32_t(i >> 32), 0, 0}, key_);
  }

  // Element i as a uniform value in [lo, hi): float32 from 24 random bits, float64 from 53.
  float uniform_f32(uint64_t i, float lo, float hi) const;
  double uniform_f64(uint64_t i, double lo, double hi) const;
  // Element i as an integer in [lo, hi) (hi > lo), from 64 random bits; the bias is below
  // (hi - lo) / 2^64, negligible for test data.
  int64_t integer(uint64_t i, int64_t lo, int64_t hi) const;
  // Element i is true with probability p (resolution 2^-32).
  bool bernoulli(uint64_t i, double p) const;

  // Fill a whole tensor, in parallel. Floating dtypes: uniform in [lo, hi) (float16 rounds a
  // float32 draw). Integer dtypes: integers in [ceil(lo), ceil(hi)). Bool: true with p = 0.5.
  void fill_uniform(Tensor& t, double lo, double hi) const;
  // Any dtype: 1 with probability p, else 0 (masks of a chosen density).
  void fill_bernoulli(Tensor& t, double p) const;

 private:
  PhiloxKey key_;
};

}  // namespace parity
