#pragma once
// cat as torch.cat: one or more tensors of one dtype joined along dim (negative counts from
// the end). Shapes must match except along dim. As torch, a 1-D tensor of size 0 is skipped
// whatever the others' rank (the legacy empty tensor); other zero-size inputs take part.
// Line: cat x=SHAPE,SHAPE,... dim=D [dtype=D]      (inputs x0, x1, ...)
#include <string>
#include <string_view>
#include <vector>

#include "kernels/backend.h"

namespace parity {

struct CatParams {
  static constexpr const char* kName = "cat";
  std::vector<Shape> xs;
  int64_t dim = 0;
  DType dtype = DType::Float32;

  template <class Self, class F> static void fields(Self& p, F& f) {  // the line's fields, in order (kernels/op_line.h)
    f.shape_list("x", p.xs);
    f.integer_always("dim", p.dim, 0);
    f.dtype("dtype", p.dtype, DType::Float32);
  }
  static CatParams parse(std::string_view line);  // validates
  std::string str() const;
  void validate() const;
  std::vector<TensorSpec> inputs() const;
  Shape output_shape() const;
  // dim in [0, rank) of the inputs that take part; 0 when every input is skipped.
  int64_t resolved_dim() const;
  static bool skipped(const Shape& s) { return s.rank() == 1 && s[0] == 0; }
};

Tensor cat_ref(const CatParams& p, const std::vector<Tensor>& xs);
Tensor cat_aten(const CatParams& p, const std::vector<Tensor>& xs);
// The project's CUDA kernel (<op>_cuda.cu; built with nvcc, runs where a GPU is present).
Tensor cat_cuda(const CatParams& p, const std::vector<Tensor>& xs);

OpFn cat_op(decltype(&cat_ref) fn);

struct OpTraits;
OpTraits cat_traits();

}  // namespace parity
