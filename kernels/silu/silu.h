#pragma once
// silu as torch.nn.functional.silu: x * sigmoid(x), float32 or float64, elementwise.
// Line: silu x=SHAPE [dtype=float64]
#include "kernels/elementwise_params.h"

namespace parity {

struct SiluTag {
  static constexpr const char* kName = "silu";
  static constexpr const char* kInputs[] = {"x"};
  static bool accepts(DType dt) { return is_float32_or_64(dt); }
};
using SiluParams = ElementwiseParams<SiluTag>;

// The reference computes x / (1 + exp(-x)) in float64 and rounds once.
Tensor silu_ref(const SiluParams& p, const Tensor& x);
Tensor silu_aten(const SiluParams& p, const Tensor& x);
// The project's CUDA kernel (<op>_cuda.cu; built with nvcc, runs where a GPU is present).
Tensor silu_cuda(const SiluParams& p, const Tensor& x);

struct OpTraits;
OpTraits silu_traits();

}  // namespace parity
