#pragma once
// The float key CUB's radix sort orders in place of a score, so that the order is the
// reference's (argsort, nms): every NaN becomes one positive NaN, which sorts above +inf (last
// ascending, first descending), and -0.0 becomes +0.0, so the two tie as the reference's
// comparisons see them. Radix sort is stable, so ties keep index order.
namespace parity::cuda {

__device__ inline float sort_key(float v) { return isnan(v) ? __int_as_float(0x7fffffff) : (v == 0.0f ? 0.0f : v); }

}  // namespace parity::cuda
