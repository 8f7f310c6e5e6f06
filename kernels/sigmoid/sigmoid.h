#pragma once
// sigmoid as torch.sigmoid: 1 / (1 + exp(-x)), float32 or float64, elementwise.
// Line: sigmoid x=SHAPE [dtype=float64]
#include "kernels/elementwise_params.h"

namespace parity {

struct SigmoidTag {
  static constexpr const char* kName = "sigmoid";
  static constexpr const char* kInputs[] = {"x"};
  static bool accepts(DType dt) { return is_float32_or_64(dt); }
};
using SigmoidParams = ElementwiseParams<SigmoidTag>;

// The reference computes in float64 and rounds once.
Tensor sigmoid_ref(const SigmoidParams& p, const Tensor& x);
Tensor sigmoid_aten(const SigmoidParams& p, const Tensor& x);
// The project's CUDA kernel (<op>_cuda.cu; built with nvcc, runs where a GPU is present).
Tensor sigmoid_cuda(const SigmoidParams& p, const Tensor& x);

struct OpTraits;
OpTraits sigmoid_traits();

}  // namespace parity
