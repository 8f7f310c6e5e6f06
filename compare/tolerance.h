#pragma once
// The tolerance policy: how far backend B's output may be from backend A's for an op call.
//
// Defaults by dtype, torch.testing's: float32 atol 1e-5 rtol 1.3e-6, float64 atol 1e-7 rtol
// 1e-7, float16 atol 1e-5 rtol 1e-3; integers and bools exact. Per op, as its traits say
// (kernels/op_traits.h):
//   dot products (conv2d's output): plus a per-element bound (K + 2) * 2^-24 * S, K the
//     reduction length (IC/groups*KH*KW) and S = sum |x*w| + |b| over the element's window,
//     computed in float64 from the layer's inputs only for elements that fail the default
//     tolerance and its floor (Tolerance::bound_floor). A float32 dot product of K terms,
//     summed in any order, is within (K - 1) * 2^-24 * S of the exact value; so a correct
//     float32 kernel never exceeds it, while a wrong tap, padding or bias is off by a whole term.
//     Under a profile with coarser conv inputs (--precision tf32, fp16, bf16) each product may
//     also be off by (2 u_in + u_in^2) |x*w|, so the bound adds that times S.
//   an extra absolute error (detect_decode): atol grows to 32 * 2^-24 * stride: the x, y
//     columns are formed at grid magnitude and scaled by the stride in float32.
#include <string>
#include <vector>

#include "compare/precision.h"
#include "compare/tensor_compare.h"
#include "kernels/call.h"
#include "kernels/op_traits.h"

namespace parity {

// The tolerance for output `index` of `call` with the given inputs, under a profile.
Tolerance tolerance_for(const Call& call, size_t index, DType dtype, const std::vector<Tensor>& inputs,
                        const PrecisionProfile& profile);

Tolerance default_tolerance(DType dtype);
// A dot product's per-element bound (conv2d, linear, matmul: sums of K terms) is this times S,
// the element's sum of |terms| (conv2d: sum |x*w| + |b|). `u_sum`: the unit roundoff its partial
// sums are rounded to (float32's, 2^-24, unless a kernel sums in a half type).
double dot_product_bound_scale(int64_t K, const PrecisionProfile& profile, double u_sum = 0x1p-24);
// The defaults for a float output under a profile: the dtype's for fp32 and tf32 (TF32 rounds
// only conv and matmul inputs), torch.testing's float16 and bfloat16 ones for fp16 and bf16.
Tolerance profile_tolerance(DType dtype, const PrecisionProfile& profile);
// Two copies of data that agrees, A's against B's (a slice, a crop, a cached grid), where no
// chain of views and copies was recorded to check each side against its own producer: 16 times
// profile_tolerance. Copies of agreeing data stay well within it, a wrong slice does not.
Tolerance copy_tolerance(DType dtype, const PrecisionProfile& profile);

// The effective precision of `actual` against `expected` (output `index` of `call` on `inputs`)
// and, for conv2d with its inputs at hand, the statistical test (compare/precision.h), from
// kSamples elements spread over the output. Empty stats for non-float outputs.
PrecisionStats precision_stats(const Call& call, size_t index, const std::vector<Tensor>& inputs, const Tensor& expected,
                               const Tensor& actual, const PrecisionProfile& profile);

// A kernel's own precision, without a judge run: conv2d's sampled elements of `output` against
// their exact dot products on `inputs` (the call's own), with the statistical test. So a compare
// of two model dumps shows each side's conv precision, not the drift their inputs carry.
// Empty stats for other ops, or when the inputs are not at hand.
PrecisionStats own_precision_stats(const Call& call, size_t index, const std::vector<Tensor>& inputs, const Tensor& output,
                                   const PrecisionProfile& profile);

// The same two from element values (a float output of `shape`), for a caller that keeps only the
// elements precision_sample_elements names.
PrecisionStats precision_stats(const Call& call, size_t index, const std::vector<Tensor>& inputs, const Shape& shape,
                               const ElementValues& expected, const ElementValues& actual, const PrecisionProfile& profile);
PrecisionStats own_precision_stats(const Call& call, size_t index, const std::vector<Tensor>& inputs, const Shape& shape,
                                   const ElementValues& output, const PrecisionProfile& profile);
// The elements of an output of `shape` that the functions above read, sorted, no repeats: the
// dot products' samples where `d` (the call's, on its inputs) is given, and result_stats'.
std::vector<int64_t> precision_sample_elements(const Shape& shape, const DotProducts* d);

}  // namespace parity
