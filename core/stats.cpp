#include "core/stats.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/thread_pool.h"

namespace parity {

namespace {

constexpr int64_t kChunk = 1 << 16;

template <typename T> double to_double(T v) {
  if constexpr (std::is_same_v<T, Half>) {
    return half_to_float(v);
  } else {
    return static_cast<double>(v);
  }
}

struct Partial {
  int64_t finite = 0, nan = 0, pos_inf = 0, neg_inf = 0, zeros = 0;
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  double mean = 0, m2 = 0;  // mean and sum of squared deviations of the finite elements
  int64_t int_min = std::numeric_limits<int64_t>::max();
  int64_t int_max = std::numeric_limits<int64_t>::min();
};

template <typename T> Partial chunk_stats(const T* p, int64_t n) {
  Partial s;
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = to_double(p[i]);
    if (std::isnan(v)) {
      ++s.nan;
      continue;
    }
    if (std::isinf(v)) {
      ++(v > 0 ? s.pos_inf : s.neg_inf);
      continue;
    }
    if (v == 0) ++s.zeros;
    ++s.finite;
    sum += v;
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
    if constexpr (std::is_integral_v<T>) {
      s.int_min = std::min<int64_t>(s.int_min, static_cast<int64_t>(p[i]));
      s.int_max = std::max<int64_t>(s.int_max, static_cast<int64_t>(p[i]));
    }
  }
  if (s.finite == 0) return s;
  // Second pass over the (cache-resident) chunk: deviations from the chunk mean, which keeps
  // std accurate when the mean is large against the spread.
  s.mean = sum / double(s.finite);
  for (int64_t i = 0; i < n; ++i) {
    const double v = to_double(p[i]);
    if (std::isfinite(v)) s.m2 += (v - s.mean) * (v - s.mean);
  }
  return s;
}

void merge(Partial& a, const Partial& b) {
  a.nan += b.nan;
  a.pos_inf += b.pos_inf;
  a.neg_inf += b.neg_inf;
  a.zeros += b.zeros;
  if (b.finite == 0) return;
  if (a.finite == 0) {
    const int64_t nan = a.nan, pinf = a.pos_inf, ninf = a.neg_inf, zeros = a.zeros;
    a = b;
    a.nan = nan, a.pos_inf = pinf, a.neg_inf = ninf, a.zeros = zeros;
    return;
  }
  const double na = double(a.finite), nb = double(b.finite), n = na + nb;
  const double delta = b.mean - a.mean;
  a.mean += delta * (nb / n);
  a.m2 += b.m2 + delta * delta * (na * nb / n);
  a.finite += b.finite;
  a.min = std::min(a.min, b.min);
  a.max = std::max(a.max, b.max);
  a.int_min = std::min(a.int_min, b.int_min);
  a.int_max = std::max(a.int_max, b.int_max);
}

}  // namespace

TensorStats compute_stats(const Tensor& t) {
  const int64_t n = t.numel();
  std::vector<Partial> partials(static_cast<size_t>(chunk_count(n, kChunk)));
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = t.data<T>();
    parallel_for(n, kChunk, [&](int64_t b, int64_t e) {
      partials[static_cast<size_t>(b / kChunk)] = chunk_stats(p + b, e - b);
    });
  });
  Partial total;
  for (const Partial& p : partials) merge(total, p);

  TensorStats s;
  s.count = n;
  s.finite = total.finite;
  s.nan = total.nan;
  s.pos_inf = total.pos_inf;
  s.neg_inf = total.neg_inf;
  s.zeros = total.zeros;
  if (total.finite > 0) {
    s.min = total.min;
    s.max = total.max;
    s.mean = total.mean;
    s.std = std::sqrt(total.m2 / double(total.finite));
    s.int_min = total.int_min;
    s.int_max = total.int_max;
  }
  return s;
}

double element_as_double(const Tensor& t, int64_t i) { return element_as_double(t.dtype(), t.bytes(), i); }

double element_as_double(DType dtype, const std::byte* base, int64_t i) {
  return visit_dtype(dtype, [&](auto tag) {
    decltype(tag) v;
    std::memcpy(&v, base + size_t(i) * sizeof v, sizeof v);
    return to_double(v);
  });
}

Tensor float_values_as(const Tensor& t, DType to) {
  if (t.dtype() == to) return t;
  if (!is_floating(t.dtype()) || (to != DType::Float32 && to != DType::Float64)) {
    throw Error("cannot convert " + std::string(dtype_name(t.dtype())) + " values to " + std::string(dtype_name(to)));
  }
  Tensor out(to, t.shape());
  visit_dtype(t.dtype(), [&](auto tag) {
    const auto* p = t.data<decltype(tag)>();
    if (to == DType::Float32) {
      float* o = out.mutable_data<float>();
      for (int64_t i = 0; i < t.numel(); ++i) o[i] = float(to_double(p[i]));
    } else {
      double* o = out.mutable_data<double>();
      for (int64_t i = 0; i < t.numel(); ++i) o[i] = to_double(p[i]);
    }
  });
  return out;
}

}  // namespace parity
