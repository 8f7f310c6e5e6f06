#include "kernels/silu/silu.h"

#include <cmath>

#include "core/half.h"
#include "kernels/op_traits.h"

namespace parity {

OpTraits silu_traits() {
  OpTraits t = traits_for<SiluParams>(unary_op(silu_ref), PARITY_CUDA_OP(unary_op(silu_cuda)));
  t.examples = {"silu x=1x32x32x32"};
  // x over (-8, 8): both tails of the sigmoid and the curve between.
  t.seed_input = seed_floats(-8, 8);
  auto any = [](const Call&, const std::vector<Tensor>&) { return true; };
  t.defects = {{"silu16", Defect::Strikes::OneCall, Defect::Gives::WrongAnswer, any,
                [](const Call& call, const std::vector<Tensor>& in, const OpFn& ref) {
                  // Computed in float16 throughout.
                  std::vector<Tensor> out = ref(call, in);
                  float* p = out[0].mutable_data<float>();
                  const float* x = in[0].data<float>();
                  for (int64_t i = 0; i < out[0].numel(); ++i) {
                    const float h = half_to_float(float_to_half(x[i]));
                    p[i] = half_to_float(float_to_half(h / (1.0f + half_to_float(float_to_half(std::exp(-h))))));
                  }
                  return out;
                }},
               {"nan", Defect::Strikes::OneCall, Defect::Gives::WrongAnswer, any, [](const Call& call, const std::vector<Tensor>& in, const OpFn& ref) {
                  std::vector<Tensor> out = ref(call, in);
                  if (out[0].numel() > 0) out[0].mutable_data<float>()[0] = NAN;
                  return out;
                }}};
  return t;
}

}  // namespace parity
