#include "compare/tolerance.h"

#include <cmath>

#include "kernels/backend.h"
#include "kernels/conv2d/conv2d.h"
#include "kernels/detect_decode/detect_decode.h"

namespace parity {

namespace {
constexpr double kU32 = 0x1p-24;

Tensor abs_copy(const Tensor& t) {
  Tensor a = t.clone();
  float* p = a.mutable_data<float>();
  for (int64_t i = 0; i < a.numel(); ++i) p[i] = std::fabs(p[i]);
  return a;
}
}  // namespace

Tolerance default_tolerance(DType dtype) {
  switch (dtype) {
    case DType::Float32: return {1e-5, 1.3e-6, {}};
    case DType::Float64: return {1e-7, 1e-7, {}};
    case DType::Float16: return {1e-5, 1e-3, {}};
    default: return {};
  }
}

Tolerance tolerance_for(const std::string& line, size_t index, DType dtype, const std::vector<Tensor>& inputs) {
  Tolerance t = default_tolerance(dtype);
  const std::string op = op_name_of(line);
  if (op == "conv2d" && index == 0) {
    const Conv2dParams p = Conv2dParams::parse(line);
    const Tensor ax = abs_copy(inputs[0]), aw = abs_copy(inputs[1]);
    const Tensor ab = p.bias ? abs_copy(inputs[2]) : Tensor();
    t.bound = conv2d_ref_f64(p, ax, aw, p.bias ? &ab : nullptr);
    const double scale = double(p.reduction_length() + 2) * kU32;
    double* b = t.bound.mutable_data<double>();
    for (int64_t i = 0; i < t.bound.numel(); ++i) b[i] *= scale;
  } else if (op == "detect_decode") {
    t.atol = std::max(t.atol, 32 * kU32 * double(DetectDecodeParams::parse(line).stride));
  }
  return t;
}

}  // namespace parity
