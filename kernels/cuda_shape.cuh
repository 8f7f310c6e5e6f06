#pragma once
// A tensor shape passed to kernels by value, for turning flat indices into coordinates.
#include <cstdint>

#include "kernels/cuda_util.h"

namespace parity::cuda {

struct Dims {
  static constexpr int kMaxRank = 16;
  int64_t d[kMaxRank];
  int rank;
};

inline Dims dims_of(const Shape& s, const char* op) {
  if (s.rank() > size_t(Dims::kMaxRank)) {
    throw Error(std::string("cuda ") + op + ": rank " + std::to_string(s.rank()) + " exceeds the " +
                std::to_string(Dims::kMaxRank) + " dimensions the CUDA kernels take");
  }
  Dims r{};
  r.rank = int(s.rank());
  for (int i = 0; i < r.rank; ++i) r.d[i] = s[size_t(i)];
  return r;
}

}  // namespace parity::cuda
