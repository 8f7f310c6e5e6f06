#pragma once
// conv2d as torch.nn.functional.conv2d: NCHW float32 input x, weight [OC, IC/groups, KH, KW],
// optional bias [OC], stride, padding, dilation, groups. Output [N, OC, OH, OW] with
// OH = (H + 2*pad_h - dil_h*(KH-1) - 1) / stride_h + 1 (and likewise OW).
// Line: conv2d x=NxICxHxW w=OCxICgxKHxKW [bias] [stride=S|SHxSW] [pad=P|PHxPW] [dilation=D] [groups=G]
#include <string>
#include <string_view>
#include <vector>

#include "kernels/backend.h"

namespace parity {

struct Conv2dParams {
  static constexpr const char* kName = "conv2d";
  Shape x, w;
  bool bias = false;
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1, groups = 1;

  template <class Self, class F> static void fields(Self& p, F& f) {  // the line's fields, in order (kernels/op_line.h)
    f.shape("x", p.x);
    f.shape("w", p.w);
    f.flag("bias", p.bias);
    f.hw("stride", p.stride_h, p.stride_w, 1);
    f.hw("pad", p.pad_h, p.pad_w, 0);
    f.hw("dilation", p.dil_h, p.dil_w, 1);
    f.integer("groups", p.groups, 1);
  }
  static Conv2dParams parse(std::string_view line);  // validates
  std::string str() const;
  std::vector<TensorSpec> inputs() const;  // x, w[, b]
  Shape output_shape() const;
  void validate() const;
  // IC/groups * KH * KW: the length of each output's dot product (the tolerance grows with it).
  int64_t reduction_length() const { return w[1] * w[2] * w[3]; }
  friend bool operator==(const Conv2dParams& a, const Conv2dParams& b) { return a.str() == b.str(); }
};

// One signature per backend. bias is null when p.bias is false.
Tensor conv2d_ref(const Conv2dParams& p, const Tensor& x, const Tensor& w, const Tensor* bias);
Tensor conv2d_aten(const Conv2dParams& p, const Tensor& x, const Tensor& w, const Tensor* bias);
// The project's CUDA kernel (conv2d_cuda.cu): implicit GEMM, float32 accumulation, bias fused,
// K split across blocks where the output alone would leave the GPU idle.
Tensor conv2d_cuda(const Conv2dParams& p, const Tensor& x, const Tensor& w, const Tensor* bias);
// The reference's float64 result before rounding to float32: expected outputs of golden data.
Tensor conv2d_ref_f64(const Conv2dParams& p, const Tensor& x, const Tensor& w, const Tensor* bias);

// Checks the tensors against p (every entry point calls it first).
void check_conv2d_inputs(const Conv2dParams& p, const Tensor& x, const Tensor& w, const Tensor* bias);

OpFn conv2d_op(decltype(&conv2d_ref) fn);

struct OpTraits;
// seeds w and b as PyTorch initialises them; output 0 as dot products; faulty defects pad, bias,
// ktail, tf32, fp16, bf16 (kernels/faulty/faulty.h).
OpTraits conv2d_traits();

}  // namespace parity
