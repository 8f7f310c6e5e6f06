// nms on the aten backend: torchvision's own kernel (torchvision::nms, the one YOLOv5's val.py
// calls) when its C++ library loads, called through the dispatcher without Python; otherwise
// composed from ATen tensor ops (a stable descending sort, then per kept box one vectorised IoU
// against all boxes), which shares its algorithm with the reference and so is the weaker oracle.
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
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

#include <optional>
#include <string>

#include "kernels/aten/plugin.h"
#include "kernels/aten/util.h"
#include "kernels/nms/nms.h"

namespace parity {

namespace {
using TorchvisionNmsOp = c10::TypedOperatorHandle<at::Tensor(const at::Tensor&, const at::Tensor&, double)>;

struct TorchvisionNms {
  std::optional<TorchvisionNmsOp> op;
  std::string kind;  // which nms runs, and why not torchvision's
};

// $PARITY_TORCHVISION_LIB (a path, or "none" for the composed nms), else the library CMake found.
const TorchvisionNms& torchvision_nms() {
  static const TorchvisionNms tv = [] {
    TorchvisionNms t;
    const std::string composed = "composed from ATen ops (";
    const TorchvisionLibrary& lib = torchvision_library();
    if (!lib.loaded) {
      t.kind = composed + lib.why_not + ")";
      return t;
    }
    const std::string& path = lib.path;
    const auto handle = c10::Dispatcher::singleton().findSchema({"torchvision::nms", ""});
    if (!handle) {
      t.kind = composed + path + " registers no torchvision::nms)";
      return t;
    }
    t.op = handle->typed<at::Tensor(const at::Tensor&, const at::Tensor&, double)>();
    t.kind = "torchvision::nms from " + path;
    return t;
  }();
  return tv;
}
}  // namespace

std::string nms_aten_kind() {
  try {
    return torchvision_nms().kind;
  } catch (const std::exception& e) {
    return std::string("composed from ATen ops (torchvision::nms: ") + e.what() + ")";
  }
}

Tensor nms_aten(const NmsParams& p, const std::vector<Tensor>& in) {
  check_inputs(NmsParams::kName, p.inputs(), in);
  const Tensor shifted = nms_offset_boxes(p, in);
  if (const TorchvisionNms& tv = torchvision_nms(); tv.op) {
    return aten_call(NmsParams::kName, [&] {
      // torchvision's CPU kernel: its own score sort (not stable: tie order is its own), float IoU
      // against the double threshold, kept indices in visiting order.
      // On the GPU (aten:cuda), its CUDA kernel: a bitmask of IoUs, the greedy pass on the host.
      return from_aten(tv.op->call(to_aten(shifted), to_aten(in[1]), p.iou));
    });
  }
  return nms_composed_aten(p, shifted, in[1]);
}

Tensor nms_composed_aten(const NmsParams& p, const Tensor& shifted, const Tensor& scores_in) {
  return aten_call(NmsParams::kName, [&] {
    const at::Tensor boxes = to_aten(shifted), scores = to_aten(scores_in);
    const at::Tensor x1 = boxes.select(1, 0), y1 = boxes.select(1, 1), x2 = boxes.select(1, 2), y2 = boxes.select(1, 3);
    const at::Tensor areas = at::mul(at::sub(x2, x1), at::sub(y2, y1));
    // The visiting order and the suppressed flags live on the host (read element by element);
    // the IoUs are computed where the boxes are.
    const at::Tensor order = std::get<1>(at::sort(scores, /*stable=*/true, /*dim=*/0, /*descending=*/true)).to(at::kCPU);
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
      suppressed.logical_or_(at::gt(iou.to(at::kDouble), p.iou).to(at::kCPU));
    }
    Tensor out(DType::Int64, Shape{int64_t(keep.size())});
    std::copy(keep.begin(), keep.end(), out.mutable_data<int64_t>());
    return out;
  });
}

PARITY_ATEN_OP(NmsParams, nms_op(nms_aten));
// replay says which nms the aten backends run (Backend::note).
PARITY_ATEN_NOTE(NmsParams, nms_aten_kind);

}  // namespace parity

// Which nms the aten backend runs: torchvision's, or the composed fallback and why.
const char* parity::aten_nms_kind() {
  static const std::string kind = parity::nms_aten_kind();
  return kind.c_str();
}

// The composed fallback on its own, whatever nms_aten runs: tests check it against torchvision's.
parity::Tensor parity::aten_nms_composed(const std::string& line,
                                                                                        const std::vector<parity::Tensor>& in) {
  const parity::NmsParams p = parity::NmsParams::parse(line);
  parity::check_inputs(parity::NmsParams::kName, p.inputs(), in);
  return parity::nms_composed_aten(p, parity::nms_offset_boxes(p, in), in[1]);
}
