#pragma once
// Shared by the kernel tests: seeded inputs for an op line and element-wise tolerance checks.
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "core/rng.h"
#include "kernels/backend.h"
#include "kernels/seeded_inputs.h"

namespace parity {
// How RapidCheck prints generated values in a counterexample.
inline void showValue(const Shape& s, std::ostream& os) { os << s.str(); }
inline void showValue(DType dt, std::ostream& os) { os << dtype_name(dt); }
}  // namespace parity

namespace parity::test {

// Uniform inputs in [lo, hi) for every input of `line`: the one generator (kernels/seeded_inputs.h)
// with its range override.
inline std::vector<Tensor> seeded_inputs(const std::string& line, uint64_t seed, double lo = -1, double hi = 1) {
  return parity::seeded_inputs(line, seed, 0.5, SeedRange{lo, hi});
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

// Dimensions YOLOv5 meets and the tails that catch vectorisation bugs (odd, 17/19/23), plus 0.
inline rc::Gen<int64_t> tail_dim() { return rc::gen::element<int64_t>(0, 1, 2, 3, 5, 7, 17, 19, 23, 32); }

// A shape of rank lo..hi with tail dims, total elements bounded so 1000 cases stay fast.
inline rc::Gen<Shape> tail_shape(size_t lo, size_t hi) {
  return rc::gen::exec([lo, hi] {
    const auto rank = *rc::gen::inRange<size_t>(lo, hi + 1);
    std::vector<int64_t> dims;
    int64_t numel = 1;
    for (size_t i = 0; i < rank; ++i) {
      const int64_t d = numel > 4096 ? *rc::gen::element<int64_t>(1, 2) : *tail_dim();
      dims.push_back(d);
      numel *= std::max<int64_t>(d, 1);
    }
    return Shape(dims);
  });
}

// Runs `line` on ref and aten and asserts every output is bit-identical.
inline void assert_ref_equals_aten(const std::string& line, const std::vector<Tensor>& in) {
  const std::vector<Tensor> r = backend("ref").run(line, in), a = backend("aten").run(line, in);
  RC_ASSERT(r.size() == a.size());
  for (size_t k = 0; k < r.size(); ++k) assert_identical(r[k], a[k], line + " output " + std::to_string(k));
}

}  // namespace parity::test
