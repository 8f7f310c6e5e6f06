#include "kernels/max_dim/max_dim.h"

#include "core/error.h"
#include "kernels/op_line.h"
#include "kernels/op_traits.h"

namespace parity {

MaxDimParams MaxDimParams::parse(std::string_view line) { return parse_fields<MaxDimParams>(line); }

std::string MaxDimParams::str() const { return print_fields(*this); }

void MaxDimParams::validate() const {
  const auto rank = int64_t(x.rank());
  if (rank == 0 || dim < -rank || dim >= rank) {
    throw Error("max_dim: dim " + std::to_string(dim) + " is out of range (x=" + x.str() + ")");
  }
  if (x[size_t(resolved_dim())] == 0) throw Error("max_dim: dim has size 0, no maximum (x=" + x.str() + ")");
}

Shape MaxDimParams::output_shape() const {
  std::vector<int64_t> dims = x.dims();
  if (keepdim) {
    dims[size_t(resolved_dim())] = 1;
  } else {
    dims.erase(dims.begin() + resolved_dim());
  }
  return Shape(dims);
}

OpFn max_dim_op(decltype(&max_dim_ref) fn) {
  return bind_op<MaxDimParams>([fn](const MaxDimParams& p, const std::vector<Tensor>& in) { return fn(p, in[0]); });
}

OpTraits max_dim_traits() {
  OpTraits t = traits_for<MaxDimParams>(max_dim_op(max_dim_ref), PARITY_CUDA_OP(max_dim_op(max_dim_cuda)));
  t.examples = {"max_dim x=100x80 dim=1 keepdim"};
  t.seed_input = seed_floats(0, 1);  // class confidences
  return t;
}

}  // namespace parity
