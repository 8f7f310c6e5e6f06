#pragma once
// threshold: the confidence mask of YOLOv5's non_max_suppression, x > value, as torch's
// `prediction[..., 4] > conf_thres`: float32 x against the Python float threshold, which torch
// converts to float32 before comparing. Output bool, same shape. NaN is never above.
// Line: threshold x=SHAPE value=V
#include <string>
#include <string_view>
#include <vector>

#include "kernels/backend.h"

namespace parity {

struct ThresholdParams {
  static constexpr const char* kName = "threshold";
  Shape x;
  double value = 0;

  template <class Self, class F> static void fields(Self& p, F& f) {  // the line's fields, in order (kernels/op_line.h)
    f.shape("x", p.x);
    f.real("value", p.value);
  }
  static ThresholdParams parse(std::string_view line);  // validates
  std::string str() const;
  void validate() const {}  // any shape and dtype the fields can hold
  std::vector<TensorSpec> inputs() const { return {{"x", DType::Float32, x}}; }
};

Tensor threshold_ref(const ThresholdParams& p, const Tensor& x);
Tensor threshold_aten(const ThresholdParams& p, const Tensor& x);
// The project's CUDA kernel (<op>_cuda.cu; built with nvcc, runs where a GPU is present).
Tensor threshold_cuda(const ThresholdParams& p, const Tensor& x);

struct OpTraits;
OpTraits threshold_traits();

}  // namespace parity
