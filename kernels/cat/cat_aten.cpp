#include <ATen/ops/cat.h>

#include "kernels/aten/util.h"
#include "kernels/cat/cat.h"

namespace parity {

Tensor cat_aten(const CatParams& p, const std::vector<Tensor>& xs) {
  check_inputs(CatParams::kName, p.inputs(), xs);
  return aten_call(CatParams::kName, [&] {
    std::vector<at::Tensor> ts;
    for (const Tensor& x : xs) ts.push_back(to_aten(x));
    return from_aten(at::cat(ts, p.dim));
  });
}

PARITY_ATEN_OP(CatParams, cat_op(cat_aten));

}  // namespace parity
