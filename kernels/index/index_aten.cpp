#include <ATen/ops/index.h>

#include "kernels/aten/util.h"
#include "kernels/index/index.h"

namespace parity {

// at::index is torch's x[...] with tensor indices: a bool mask, or int64 index tensors, one per
// leading dim (none = a full slice), negatives wrapped, out-of-range refused.
Tensor index_aten(const IndexParams& p, const std::vector<Tensor>& in) {
  check_inputs(IndexParams::kName, p.inputs(), in);
  return aten_call(IndexParams::kName, [&] {
    c10::List<c10::optional<at::Tensor>> indices;
    if (p.mode == IndexParams::Mode::Select) {
      for (int64_t d = 0; d < p.resolved_dim(); ++d) indices.push_back(c10::nullopt);
    }
    for (size_t k = 1; k < in.size(); ++k) indices.push_back(to_aten(in[k]));
    return from_aten(at::index(to_aten(in[0]), indices));
  });
}

PARITY_ATEN_OP(IndexParams, index_op(index_aten));

}  // namespace parity
