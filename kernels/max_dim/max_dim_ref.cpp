#include <cmath>

#include "kernels/max_dim/max_dim.h"

namespace parity {

std::vector<Tensor> max_dim_ref(const MaxDimParams& p, const Tensor& x) {
  check_inputs(MaxDimParams::kName, p.inputs(), {x});
  const auto d = size_t(p.resolved_dim());
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < d; ++i) outer *= p.x[i];
  for (size_t i = d + 1; i < p.x.rank(); ++i) inner *= p.x[i];
  const int64_t len = p.x[d];
  Tensor values(DType::Float32, p.output_shape()), indices(DType::Int64, p.output_shape());
  const float* in = x.data<float>();
  float* v = values.mutable_data<float>();
  int64_t* ix = indices.mutable_data<int64_t>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < inner; ++k) {
      const float* col = in + o * len * inner + k;
      float best = col[0];
      int64_t at = 0;
      for (int64_t i = 1; i < len && !std::isnan(best); ++i) {
        const float c = col[i * inner];
        if (c > best || std::isnan(c)) best = c, at = i;
      }
      v[o * inner + k] = best;
      ix[o * inner + k] = at;
    }
  }
  return {values, indices};
}

}  // namespace parity
