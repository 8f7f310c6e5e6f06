#pragma once
// max_dim as torch.max(x, dim, keepdim): the largest value along dim and its index (YOLOv5's
// `conf, j = x[:, 5:].max(1, keepdim=True)`). float32 x; outputs values float32 and indices
// int64. Ties: the first index, as torch documents. A NaN is the maximum (first NaN's index).
// Line: max_dim x=SHAPE dim=D [keepdim]
#include <string>
#include <string_view>
#include <vector>

#include "kernels/backend.h"

namespace parity {

struct MaxDimParams {
  static constexpr const char* kName = "max_dim";
  Shape x;
  int64_t dim = 0;
  bool keepdim = false;

  template <class Self, class F> static void fields(Self& p, F& f) {  // the line's fields, in order (kernels/op_line.h)
    f.shape("x", p.x);
    f.integer_always("dim", p.dim, 0);
    f.flag("keepdim", p.keepdim);
  }
  static MaxDimParams parse(std::string_view line);  // validates
  std::string str() const;
  void validate() const;
  std::vector<TensorSpec> inputs() const { return {{"x", DType::Float32, x}}; }
  int64_t resolved_dim() const { return dim < 0 ? dim + int64_t(x.rank()) : dim; }
  Shape output_shape() const;
};

// Returns {values, indices}.
std::vector<Tensor> max_dim_ref(const MaxDimParams& p, const Tensor& x);
std::vector<Tensor> max_dim_aten(const MaxDimParams& p, const Tensor& x);
// The project's CUDA kernel (<op>_cuda.cu; built with nvcc, runs where a GPU is present).
std::vector<Tensor> max_dim_cuda(const MaxDimParams& p, const Tensor& x);

OpFn max_dim_op(decltype(&max_dim_ref) fn);

struct OpTraits;
OpTraits max_dim_traits();

}  // namespace parity
