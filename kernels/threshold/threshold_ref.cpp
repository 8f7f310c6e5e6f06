#include "core/thread_pool.h"
#include "kernels/threshold/threshold.h"

namespace parity {

Tensor threshold_ref(const ThresholdParams& p, const Tensor& x) {
  check_inputs(ThresholdParams::kName, p.inputs(), {x});
  Tensor out(DType::Bool, p.x);
  const float* in = x.data<float>();
  bool* o = out.mutable_data<bool>();
  const auto value = float(p.value);
  parallel_for(x.numel(), 1 << 16, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) o[i] = in[i] > value;
  });
  return out;
}

}  // namespace parity
