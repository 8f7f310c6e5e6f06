#pragma once
// upsample_nearest2d as torch.nn.Upsample(scale_factor=s, mode='nearest') with integer scale
// factors (YOLOv5 uses 2): NCHW float32 in, [N, C, H*sh, W*sw] out, out[y][x] = in[y/sh][x/sw].
// Line: upsample_nearest2d x=NxCxHxW scale=S|SHxSW
#include <string>
#include <string_view>
#include <vector>

#include "kernels/backend.h"

namespace parity {

struct UpsampleNearest2dParams {
  static constexpr const char* kName = "upsample_nearest2d";
  Shape x;
  int64_t scale_h = 2, scale_w = 2;

  template <class Self, class F> static void fields(Self& p, F& f) {  // the line's fields, in order (kernels/op_line.h)
    f.shape("x", p.x);
    f.hw("scale", p.scale_h, p.scale_w, 0);
  }
  static UpsampleNearest2dParams parse(std::string_view line);  // validates
  std::string str() const;
  void validate() const;
  std::vector<TensorSpec> inputs() const { return {{"x", DType::Float32, x}}; }
  Shape output_shape() const { return Shape{x[0], x[1], x[2] * scale_h, x[3] * scale_w}; }
};

Tensor upsample_nearest2d_ref(const UpsampleNearest2dParams& p, const Tensor& x);
Tensor upsample_nearest2d_aten(const UpsampleNearest2dParams& p, const Tensor& x);
// The project's CUDA kernel (<op>_cuda.cu; built with nvcc, runs where a GPU is present).
Tensor upsample_nearest2d_cuda(const UpsampleNearest2dParams& p, const Tensor& x);

struct OpTraits;
OpTraits upsample_nearest2d_traits();

}  // namespace parity
