#pragma once
// Shared by the kernel tests: seeded inputs for an op line and element-wise tolerance checks.
#include <rapidcheck.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/rng.h"
#include "kernels/backend.h"

namespace parity::test {

// Uniform inputs in [lo, hi) for every input of `line`, one stream per input.
inline std::vector<Tensor> seeded_inputs(const std::string& line, uint64_t seed, double lo = -1, double hi = 1) {
  std::vector<Tensor> out;
  uint32_t index = 0;
  for (const TensorSpec& s : op_inputs(line)) {
    Tensor t(s.dtype, s.shape);
    RngStream(seed, line, index++).fill_uniform(t, lo, hi);
    out.push_back(t);
  }
  return out;
}

// Element i of a float32/float64 tensor as double.
inline double at_f(const Tensor& t, int64_t i) {
  return t.dtype() == DType::Float64 ? t.data<double>()[i] : double(t.data<float>()[i]);
}

// Asserts |a - b| <= bound(i) for every element (RapidCheck context), naming the first failure.
template <typename Bound> void assert_close(const Tensor& a, const Tensor& b, Bound bound, const std::string& what) {
  RC_ASSERT(a.dtype() == b.dtype());
  RC_ASSERT(a.shape() == b.shape());
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = at_f(a, i), y = at_f(b, i), tol = bound(i);
    if (!(std::fabs(x - y) <= tol) && !(std::isnan(x) && std::isnan(y))) {
      char buf[200];
      std::snprintf(buf, sizeof buf, ": element %lld ref %.9g vs aten %.9g, |diff| %.3g > tolerance %.3g",
                    static_cast<long long>(i), x, y, std::fabs(x - y), tol);
      RC_FAIL(what + buf);
    }
  }
}

// Asserts bit-identical tensors (dtype, shape, bytes).
inline void assert_identical(const Tensor& a, const Tensor& b, const std::string& what) {
  RC_ASSERT(a.dtype() == b.dtype());
  if (a.shape() != b.shape()) RC_FAIL(what + ": shape " + a.shape().str() + " vs " + b.shape().str());
  for (size_t i = 0; i < a.nbytes(); ++i) {
    if (a.bytes()[i] != b.bytes()[i]) RC_FAIL(what + ": byte " + std::to_string(i) + " differs");
  }
}

inline constexpr double kU32 = 0x1p-24;  // unit roundoff of float32

}  // namespace parity::test
