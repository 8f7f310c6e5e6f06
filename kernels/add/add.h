#pragma once
// add as torch.add of two tensors of the same shape (YOLOv5's residual x + cv2(cv1(x))); no
// broadcasting. float32, float64, int32, int64.
// Line: add x=SHAPE [dtype=D]   (inputs x and y, both of shape x)
#include "kernels/elementwise_params.h"

namespace parity {

struct AddTag {
  static constexpr const char* kName = "add";
  static constexpr const char* kInputs[] = {"x", "y"};
  static bool accepts(DType dt) {
    return dt == DType::Float32 || dt == DType::Float64 || dt == DType::Int32 || dt == DType::Int64;
  }
};
using AddParams = ElementwiseParams<AddTag>;

// Floats: computed in float64 and rounded once, which is the correctly rounded sum (float64
// holds every sum of two float32 values exactly or within half a float32 ulp). Integers wrap
// around as torch's do.
Tensor add_ref(const AddParams& p, const Tensor& x, const Tensor& y);
Tensor add_aten(const AddParams& p, const Tensor& x, const Tensor& y);
// The project's CUDA kernel (<op>_cuda.cu; built with nvcc, runs where a GPU is present).
Tensor add_cuda(const AddParams& p, const Tensor& x, const Tensor& y);

struct OpTraits;
OpTraits add_traits();

}  // namespace parity
