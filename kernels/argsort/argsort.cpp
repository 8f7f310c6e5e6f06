#include "kernels/argsort/argsort.h"

#include "core/error.h"
#include "kernels/op_line.h"
#include "kernels/op_traits.h"
#include "kernels/order_checks.h"

namespace parity {

ArgsortParams ArgsortParams::parse(std::string_view line) { return parse_fields<ArgsortParams>(line); }

std::string ArgsortParams::str() const { return print_fields(*this); }

void ArgsortParams::validate() const {
  if (x.rank() != 1) throw Error("argsort: x must be 1-D (x=" + x.str() + ")");
}

OpTraits argsort_traits() {
  OpTraits t = traits_for<ArgsortParams>(unary_op(argsort_ref), PARITY_CUDA_OP(unary_op(argsort_cuda)));
  t.examples = {"argsort x=100 descending"};
  t.seed_input = seed_floats(0, 1);  // scores
  t.check_answer = [](const Call& call, const std::vector<Tensor>& in, const Tensor& order) {
    const OrderCheck c = check_argsort(in[0], call.params<ArgsortParams>().descending, order);
    return AnswerCheck{c.valid, "a permutation that sorts its input, " + std::to_string(c.ties) + " adjacent equal keys in any order",
                       "not an argsort of its input: " + c.violation};
  };
  return t;
}

}  // namespace parity
