#pragma once
// Summary statistics of one tensor, as `parity inspect` prints them.
#include <cstdint>

#include "core/tensor.h"

namespace parity {

struct TensorStats {
  int64_t count = 0;   // all elements
  int64_t finite = 0;  // elements min/max/mean/std are taken over (all of them for integers)
  int64_t nan = 0, pos_inf = 0, neg_inf = 0, zeros = 0;
  // Over the finite elements; meaningful only when finite > 0. Integer tensors also keep exact
  // extremes (an int64 above 2^53 has no exact double).
  double min = 0, max = 0, mean = 0, std = 0;  // std: population (ddof=0), numpy's default
  int64_t int_min = 0, int_max = 0;
};

// Accumulates in float64 per fixed-size chunk and merges chunks in order (Chan et al.), so the
// result is the same for every thread count.
TensorStats compute_stats(const Tensor& t);

// Element i as a double (exact for every dtype but int64 beyond 2^53).
double element_as_double(const Tensor& t, int64_t i);
// The same for element i of `dtype` values stored from `base` (a buffer a file was read into).
double element_as_double(DType dtype, const std::byte* base, int64_t i);

// A floating tensor's values as float32 or float64 (`to`): exact when widening, one rounding
// from float64 to float32. `t` itself when it already is `to`. Throws for other dtypes.
Tensor float_values_as(const Tensor& t, DType to);

}  // namespace parity
