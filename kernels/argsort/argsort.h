#pragma once
// argsort of a 1-D float32 tensor, as YOLOv5's `x[:, 4].argsort(descending=True)`: int64
// indices. Equal values keep their index order (stable, as torch.sort(stable=True); plain
// torch.argsort is not stable, so its tie order is unspecified). NaN sorts above every number.
// Line: argsort x=N [descending]
#include <string>
#include <string_view>
#include <vector>

#include "kernels/backend.h"

namespace parity {

struct ArgsortParams {
  static constexpr const char* kName = "argsort";
  Shape x;
  bool descending = false;

  template <class Self, class F> static void fields(Self& p, F& f) {  // the line's fields, in order (kernels/op_line.h)
    f.shape("x", p.x);
    f.flag("descending", p.descending);
  }
  static ArgsortParams parse(std::string_view line);  // validates
  std::string str() const;
  void validate() const;
  std::vector<TensorSpec> inputs() const { return {{"x", DType::Float32, x}}; }
};

Tensor argsort_ref(const ArgsortParams& p, const Tensor& x);
Tensor argsort_aten(const ArgsortParams& p, const Tensor& x);
// The project's CUDA kernel (<op>_cuda.cu; built with nvcc, runs where a GPU is present).
Tensor argsort_cuda(const ArgsortParams& p, const Tensor& x);

struct OpTraits;
OpTraits argsort_traits();

}  // namespace parity
