#include <ATen/ops/max.h>

#include "kernels/aten/util.h"
#include "kernels/max_dim/max_dim.h"

namespace parity {

std::vector<Tensor> max_dim_aten(const MaxDimParams& p, const Tensor& x) {
  check_inputs(MaxDimParams::kName, p.inputs(), {x});
  return aten_call(MaxDimParams::kName, [&] {
    const auto r = at::max(to_aten(x), p.dim, p.keepdim);
    return std::vector<Tensor>{from_aten(std::get<0>(r)), from_aten(std::get<1>(r))};
  });
}

PARITY_ATEN_OP(MaxDimParams, max_dim_op(max_dim_aten));

}  // namespace parity
