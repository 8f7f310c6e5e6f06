#include "compare/output_streams.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "compare/tolerance.h"
#include "core/error.h"
#include "core/hash.h"
#include "core/stats.h"
#include "kernels/op_traits.h"

namespace parity {

Comparable comparable(const Tensor& x, const Tensor& y) {
  if (x.dtype() == y.dtype() || !is_floating(x.dtype()) || !is_floating(y.dtype()) || x.shape() != y.shape()) {
    return {x, y, x.dtype()};
  }
  const DType narrow = dtype_size(x.dtype()) < dtype_size(y.dtype()) ? x.dtype() : y.dtype();
  Tensor wide_x = float_values_as(x, DType::Float64), wide_y = float_values_as(y, DType::Float64);
  // A float64 value past float32's range is -inf or inf in float32: what a float32 kernel gives,
  // and what the dump writes of a float64 run (torch.full(..., finfo(float64).min) written as
  // float32). Not so for float16: a half run that overflows is a finding (local_check.h).
  if (narrow == DType::Float32) {
    for (Tensor* t : {&wide_x, &wide_y}) {
      const double* v = t->data<double>();
      const auto past = [](double e) { return std::isfinite(e) && std::isinf(float(e)); };
      if (std::none_of(v, v + t->numel(), past)) continue;
      *t = t->clone();  // float_values_as may return the caller's own tensor
      double* w = t->mutable_data<double>();
      for (int64_t i = 0; i < t->numel(); ++i) {
        if (past(w[i])) w[i] = double(float(w[i]));
      }
    }
  }
  return {wide_x, wide_y, narrow};
}



StreamedPair stream_pair(DType dtype, const Shape& shape, const Tolerance& tol, const std::vector<int64_t>& keep, PieceSource a,
                         PieceSource b) {
  StreamedPair r;
  r.kept_a = std::make_shared<std::vector<double>>(keep.size()), r.kept_b = std::make_shared<std::vector<double>>(keep.size());
  const size_t item = dtype_size(dtype);
  const int64_t n = shape.numel(), piece = TensorCompareStream::piece_elements();
  TensorCompareStream compare(dtype, shape, tol);
  ContentHasher hash_a, hash_b;
  const auto take = [&](const PieceSource& src, ContentHasher& hash, int64_t lo, size_t bytes) {
    if (src.memory) return src.memory->bytes() + size_t(lo) * item;
    const std::byte* p = src.stored->read(size_t(lo) * item, bytes);
    hash.update(p, bytes);
    return p;
  };
  size_t next = 0;  // the next element to keep
  for (int64_t lo = 0; lo < n; lo += piece) {
    const int64_t count = std::min(piece, n - lo);
    const size_t bytes = size_t(count) * item;
    const std::byte* pa = take(a, hash_a, lo, bytes);
    const std::byte* pb = take(b, hash_b, lo, bytes);
    compare.feed(pa, pb, count);
    for (; next < keep.size() && keep[next] < lo + count; ++next) {
      (*r.kept_a)[next] = element_as_double(dtype, pa, keep[next] - lo);
      (*r.kept_b)[next] = element_as_double(dtype, pb, keep[next] - lo);
    }
  }
  if (a.stored) r.hash_a = hash_a.digest();
  if (b.stored) r.hash_b = hash_b.digest();
  r.diff = compare.finish();
  return r;
}

std::vector<int64_t> sampled_elements(const Call* call, size_t k, const Shape& shape, const std::vector<Tensor>& in) {
  std::optional<DotProducts> dots;
  if (call && call->traits().dot_products && k == 0 && !in.empty()) {
    try {
      dots = call->traits().dot_products(*call, in);
      if (dots->shape != shape) dots.reset();  // an output the call cannot have made: no figures
    } catch (const Error&) {
      // Inputs that do not fit the call: no dot-product figures.
    }
  }
  return precision_sample_elements(shape, dots ? &*dots : nullptr);
}

void widen(Tolerance& tol, Tensor by) {
  const auto allowance = std::make_shared<const Tensor>(std::move(by));
  const std::function<double(int64_t)> before = tol.bound;
  tol.bound = [allowance, before](int64_t i) { return (before ? before(i) : 0.0) + allowance->data<double>()[i]; };
}

ElementValues kept_values(std::shared_ptr<const std::vector<int64_t>> keep, std::shared_ptr<std::vector<double>> values,
                          const std::string& layer) {
  return [keep, values, layer](int64_t i) {
    const auto at = std::lower_bound(keep->begin(), keep->end(), i);
    if (at == keep->end() || *at != i) throw Error("layer " + layer + ": element " + std::to_string(i) + " was not kept by the streamed comparison");
    return (*values)[size_t(at - keep->begin())];
  };
}

}  // namespace parity
