#pragma once
// The tolerance policy: how far backend B's output may be from backend A's for an op call.
//
// Defaults by dtype, torch.testing's: float32 atol 1e-5 rtol 1.3e-6, float64 atol 1e-7 rtol
// 1e-7, float16 atol 1e-5 rtol 1e-3; integers and bools exact. Per op:
//   conv2d: plus a per-element bound (K + 2) * 2^-24 * S, K = IC/groups*KH*KW the reduction
//     length and S = sum |x*w| + |b| over the element's window, computed in float64 from the
//     layer's inputs only for elements that fail the default tolerance. A float32 dot product of K terms, summed in any order, is within
//     (K - 1) * 2^-24 * S of the exact value; so a correct float32 kernel never exceeds it,
//     while a wrong tap, padding or bias is off by a whole term.
//   detect_decode: atol grows to 32 * 2^-24 * stride: the x, y columns are formed at grid
//     magnitude and scaled by the stride in float32.
#include <string>
#include <vector>

#include "compare/tensor_compare.h"

namespace parity {

// The tolerance for output `index` of the call `line` with the given inputs.
Tolerance tolerance_for(const std::string& line, size_t index, DType dtype, const std::vector<Tensor>& inputs);

Tolerance default_tolerance(DType dtype);

}  // namespace parity
