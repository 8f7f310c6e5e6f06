#pragma once
// mul as torch.mul of two tensors of the same shape; no broadcasting. float32, float64, int32,
// int64. (Added as the worked example of "Adding an op" in docs/EXTENDING.md: this folder and one line
// in kernels/registry.cpp are the whole change.)
// Line: mul x=SHAPE [dtype=D]   (inputs x and y, both of shape x)
#include "kernels/elementwise_params.h"

namespace parity {

struct MulTag {
  static constexpr const char* kName = "mul";
  static constexpr const char* kInputs[] = {"x", "y"};
  static bool accepts(DType dt) {
    return dt == DType::Float32 || dt == DType::Float64 || dt == DType::Int32 || dt == DType::Int64;
  }
};
using MulParams = ElementwiseParams<MulTag>;

// Floats: one IEEE multiplication in the dtype, which is correctly rounded, so every correct
// kernel gives these bits. Integers wrap around as torch's do.
Tensor mul_ref(const MulParams& p, const Tensor& x, const Tensor& y);
Tensor mul_aten(const MulParams& p, const Tensor& x, const Tensor& y);
// The project's CUDA kernel (<op>_cuda.cu; built with nvcc, runs where a GPU is present).
Tensor mul_cuda(const MulParams& p, const Tensor& x, const Tensor& y);

struct OpTraits;
OpTraits mul_traits();

}  // namespace parity
