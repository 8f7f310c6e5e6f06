// nms through ATen tensor ops (LibTorch has no nms; torchvision's is a separate library):
// a stable descending sort, then per kept box one vectorised IoU against all boxes.
#include <ATen/ops/add.h>
#include <ATen/ops/clamp_min.h>
#include <ATen/ops/div.h>
#include <ATen/ops/gt.h>
#include <ATen/ops/maximum.h>
#include <ATen/ops/minimum.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/sort.h>
#include <ATen/ops/sub.h>
#include <ATen/ops/zeros.h>

#include "kernels/aten_util.h"
#include "kernels/nms/nms.h"

namespace parity {

Tensor nms_aten(const NmsParams& p, const std::vector<Tensor>& in) {
  check_inputs(NmsParams::kName, p.inputs(), in);
  const Tensor shifted = nms_offset_boxes(p, in);
  return aten_call(NmsParams::kName, [&] {
    const at::Tensor boxes = to_aten(shifted), scores = to_aten(in[1]);
    const at::Tensor x1 = boxes.select(1, 0), y1 = boxes.select(1, 1), x2 = boxes.select(1, 2), y2 = boxes.select(1, 3);
    const at::Tensor areas = at::mul(at::sub(x2, x1), at::sub(y2, y1));
    const at::Tensor order = std::get<1>(at::sort(scores, /*stable=*/true, /*dim=*/0, /*descending=*/true));
    at::Tensor suppressed = at::zeros({p.n}, at::kBool);
    const bool* sup = suppressed.data_ptr<bool>();
    const int64_t* ord = order.data_ptr<int64_t>();
    std::vector<int64_t> keep;
    for (int64_t a = 0; a < p.n; ++a) {
      const int64_t i = ord[a];
      if (sup[i]) continue;
      keep.push_back(i);
      const at::Tensor w = at::clamp_min(at::sub(at::minimum(x2, x2[i]), at::maximum(x1, x1[i])), 0);
      const at::Tensor h = at::clamp_min(at::sub(at::minimum(y2, y2[i]), at::maximum(y1, y1[i])), 0);
      const at::Tensor inter = at::mul(w, h);
      const at::Tensor iou = at::div(inter, at::sub(at::add(areas[i], areas), inter));
      // IoU is symmetric, so marking boxes visited earlier changes nothing: they are decided.
      // In float64, as torchvision compares its float IoU with the double threshold.
      suppressed.logical_or_(at::gt(iou.to(at::kDouble), p.iou));
    }
    Tensor out(DType::Int64, Shape{int64_t(keep.size())});
    std::copy(keep.begin(), keep.end(), out.mutable_data<int64_t>());
    return out;
  });
}

}  // namespace parity
