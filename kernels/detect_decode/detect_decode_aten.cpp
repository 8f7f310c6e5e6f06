#include <ATen/ops/add.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/meshgrid.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/sub.h>
#include <ATen/ops/tensor.h>

#include "kernels/aten/util.h"
#include "kernels/detect_decode/detect_decode.h"

namespace parity {

// YOLOv5 v7.0 Detect.forward (inference) and Detect._make_grid, as tensor operations in the
// input's dtype, as _make_grid builds its grids in the anchors' (float16 in a model.half()).
Tensor detect_decode_aten(const DetectDecodeParams& p, const Tensor& x) {
  check_inputs(DetectDecodeParams::kName, p.inputs(), {x});
  return aten_call(DetectDecodeParams::kName, [&] {
    const int64_t bs = p.x[0], na = p.na(), no = p.no(), ny = p.x[2], nx = p.x[3];
    const auto f32 = at::TensorOptions().dtype(at::kFloat).device(aten_device());
    const at::Tensor xs = to_aten(x).view({bs, na, no, ny, nx}).permute({0, 1, 3, 4, 2}).contiguous();
    const auto yx = at::meshgrid({at::arange(ny, f32), at::arange(nx, f32)}, "ij");
    // Cell offsets (k - 0.5) and anchors (integers below 2048) are exact in every float type.
    const at::Tensor grid = at::sub(at::stack({yx[1], yx[0]}, 2).expand({1, na, ny, nx, 2}), 0.5).to(xs.scalar_type());
    std::vector<float> anchors(p.anchors.begin(), p.anchors.end());
    const at::Tensor anchor_grid =
        at::tensor(anchors, f32).view({1, na, 1, 1, 2}).expand({1, na, ny, nx, 2}).to(xs.scalar_type());
    const auto parts = at::sigmoid(xs).split({2, 2, no - 4}, 4);
    const at::Tensor xy = at::mul(at::add(at::mul(parts[0], 2), grid), double(p.stride));
    const at::Tensor wh = at::mul(at::pow(at::mul(parts[1], 2), 2), anchor_grid);
    return from_aten(at::cat({xy, wh, parts[2]}, 4).view({bs, na * ny * nx, no}));
  });
}

PARITY_ATEN_OP(DetectDecodeParams, unary_op(detect_decode_aten));

}  // namespace parity
