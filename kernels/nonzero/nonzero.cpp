#include "kernels/nonzero/nonzero.h"

#include "kernels/op_line.h"
#include "kernels/op_traits.h"
#include <utility>

namespace parity {

NonzeroParams NonzeroParams::parse(std::string_view line) { return parse_fields<NonzeroParams>(line); }

std::string NonzeroParams::str() const { return print_fields(*this); }

OpTraits nonzero_traits() {
  OpTraits t = traits_for<NonzeroParams>(unary_op(nonzero_ref), PARITY_CUDA_OP(unary_op(nonzero_cuda)));
  t.examples = {"nonzero x=100x80"};
  // Any dtype: nonzero with the case's density, zero elsewhere.
  t.seed_input = [](const Call&, const TensorSpec&, const RngStream& rng, double density, Tensor& x) {
    rng.fill_bernoulli(x, density);
    return true;
  };
  t.defects = {{"nonzero_swap", Defect::Strikes::OneCall, Defect::Gives::WrongAnswer, [](const Call&, const std::vector<Tensor>&) { return true; },
                [](const Call& call, const std::vector<Tensor>& in, const OpFn& ref) {
                  // Rows 0 and 1 of the index list swapped.
                  std::vector<Tensor> out = ref(call, in);
                  Tensor& y = out[0];
                  if (y.shape()[0] >= 2 && y.shape()[1] > 0) {
                    int64_t* p = y.mutable_data<int64_t>();
                    const int64_t r = y.shape()[1];
                    for (int64_t k = 0; k < r; ++k) std::swap(p[k], p[r + k]);
                  }
                  return out;
                }}};
  return t;
}

}  // namespace parity
