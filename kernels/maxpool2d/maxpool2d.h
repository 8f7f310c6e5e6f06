#pragma once
// maxpool2d as torch.nn.functional.max_pool2d (values only): NCHW float32, kernel k, stride
// (default k), padding (at most half the kernel, as torch requires), dilation, ceil_mode.
// Padding never wins (it is -inf); a NaN in a window makes the output NaN, as torch.
// YOLOv5's SPPF: maxpool2d x=1x256x20x20 k=5 stride=1 pad=2
// Line: maxpool2d x=NxCxHxW k=K|KHxKW [stride=S] [pad=P] [dilation=D] [ceil]
#include <string>
#include <string_view>
#include <vector>

#include "kernels/backend.h"

namespace parity {

struct Maxpool2dParams {
  static constexpr const char* kName = "maxpool2d";
  Shape x;
  int64_t k_h = 1, k_w = 1, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1;
  bool ceil = false;

  template <class Self, class F> static void fields(Self& p, F& f) {  // the line's fields, in order (kernels/op_line.h)
    f.shape("x", p.x);
    f.hw("k", p.k_h, p.k_w, 0);
    f.hw("stride", p.stride_h, p.stride_w, p.k_h, p.k_w);  // torch's default: the kernel size
    f.hw("pad", p.pad_h, p.pad_w, 0);
    f.hw("dilation", p.dil_h, p.dil_w, 1);
    f.flag("ceil", p.ceil);
  }
  static Maxpool2dParams parse(std::string_view line);  // validates
  std::string str() const;
  std::vector<TensorSpec> inputs() const { return {{"x", DType::Float32, x}}; }
  Shape output_shape() const;
  void validate() const;
};

Tensor maxpool2d_ref(const Maxpool2dParams& p, const Tensor& x);
Tensor maxpool2d_aten(const Maxpool2dParams& p, const Tensor& x);
// The project's CUDA kernel (<op>_cuda.cu; built with nvcc, runs where a GPU is present).
Tensor maxpool2d_cuda(const Maxpool2dParams& p, const Tensor& x);

struct OpTraits;
OpTraits maxpool2d_traits();

}  // namespace parity
