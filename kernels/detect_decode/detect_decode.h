#pragma once
// detect_decode: the inference path of one YOLOv5 v7.0 Detect level (models/yolo.py), from the
// level's 1x1 conv output x [bs, na*no, ny, nx] to boxes [bs, na*ny*nx, no]:
//   y = sigmoid(x viewed [bs, na, no, ny, nx] and permuted to [bs, na, ny, nx, no])
//   xy = (y[..., 0:2] * 2 + grid) * stride        grid = (ix - 0.5, iy - 0.5)
//   wh = (y[..., 2:4] * 2)^2 * anchor             anchor in pixels (yolov5s P3: 10,13 16,30 33,23)
//   out = cat(xy, wh, y[..., 4:])
// Line: detect_decode x=BSx(NA*NO)xNYxNX stride=S anchors=w,h,w,h,...
#include <string>
#include <string_view>
#include <vector>

#include "kernels/backend.h"

namespace parity {

struct DetectDecodeParams {
  static constexpr const char* kName = "detect_decode";
  Shape x;
  int64_t stride = 8;
  std::vector<double> anchors;  // w0, h0, w1, h1, ... in pixels

  template <class Self, class F> static void fields(Self& p, F& f) {  // the line's fields, in order (kernels/op_line.h)
    f.shape("x", p.x);
    f.integer_always("stride", p.stride, 0);
    f.real_list("anchors", p.anchors);
  }
  static DetectDecodeParams parse(std::string_view line);  // validates
  std::string str() const;
  void validate() const;
  std::vector<TensorSpec> inputs() const { return {{"x", DType::Float32, x}}; }
  int64_t na() const { return int64_t(anchors.size() / 2); }
  int64_t no() const { return x[1] / na(); }
  Shape output_shape() const { return Shape{x[0], na() * x[2] * x[3], no()}; }
};

// The reference computes each output in float64 and rounds once.
Tensor detect_decode_ref(const DetectDecodeParams& p, const Tensor& x);
// ATen replays YOLOv5's own float32 tensor arithmetic step by step.
Tensor detect_decode_aten(const DetectDecodeParams& p, const Tensor& x);
// The project's CUDA kernel (<op>_cuda.cu; built with nvcc, runs where a GPU is present).
Tensor detect_decode_cuda(const DetectDecodeParams& p, const Tensor& x);

struct OpTraits;
OpTraits detect_decode_traits();

}  // namespace parity
