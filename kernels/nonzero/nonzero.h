#pragma once
// nonzero as torch.nonzero: the int64 coordinates [count, rank] of the nonzero elements of x,
// in row-major order; any rank (a 0-d x gives [0 or 1, 0]) and any dtype. NaN is nonzero,
// -0.0 is zero.
// Line: nonzero x=SHAPE [dtype=D]   (dtype defaults to bool, YOLOv5's masks)
#include <string>
#include <string_view>
#include <vector>

#include "kernels/backend.h"

namespace parity {

struct NonzeroParams {
  static constexpr const char* kName = "nonzero";
  Shape x;
  DType dtype = DType::Bool;

  template <class Self, class F> static void fields(Self& p, F& f) {  // the line's fields, in order (kernels/op_line.h)
    f.shape("x", p.x);
    f.dtype("dtype", p.dtype, DType::Bool);
  }
  static NonzeroParams parse(std::string_view line);  // validates
  std::string str() const;
  void validate() const {}  // any shape and dtype the fields can hold
  std::vector<TensorSpec> inputs() const { return {{"x", dtype, x}}; }
};

Tensor nonzero_ref(const NonzeroParams& p, const Tensor& x);
Tensor nonzero_aten(const NonzeroParams& p, const Tensor& x);
// The project's CUDA kernel (<op>_cuda.cu; built with nvcc, runs where a GPU is present).
Tensor nonzero_cuda(const NonzeroParams& p, const Tensor& x);

struct OpTraits;
OpTraits nonzero_traits();

}  // namespace parity
