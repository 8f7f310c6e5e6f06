#include "compare/tensor_compare.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/stats.h"
#include "core/thread_pool.h"
#include "kernels/op_line.h"

namespace parity {

const char* state_name(State s) {
  switch (s) {
    case State::Passed: return "PASSED";
    case State::Failed: return "FAILED";
    case State::Mistrusted: return "MISTRUSTED";
    case State::Skipped: return "SKIPPED";
    case State::Unsupported: return "UNSUPPORTED";
    case State::Unchecked: return "UNCHECKED";
  }
  return "?";
}

std::string Tolerance::str() const {
  if (exact()) return "exact";
  std::string s = "atol " + shortest_double(atol) + " rtol " + shortest_double(rtol);
  if (bound) s += bound_share < 1 ? " + 1/" + shortest_double(1 / bound_share) + " of the per-element bound" : " + per-element bound";
  return s;
}

namespace {

std::vector<int64_t> unravel(const Shape& shape, int64_t flat) {
  std::vector<int64_t> idx(shape.rank());
  for (size_t d = shape.rank(); d-- > 0;) {
    idx[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  return idx;
}

constexpr int64_t kScanChunk = 1 << 20;

// Whether an element of [lo, hi) has a bit under `mask`: an OR over the words, without a branch
// the compiler could not vectorise, so the scan runs at memory speed.
template <typename U> bool any_bits(const std::byte* p, int64_t lo, int64_t hi, U mask) {
  U acc = 0;
#pragma omp simd reduction(| : acc)
  for (int64_t i = lo; i < hi; ++i) {
    U v;
    std::memcpy(&v, p + size_t(i) * sizeof(U), sizeof(U));
    acc |= v & mask;
  }
  return acc != 0;
}

// Chunks left once a nonzero element is found are skipped: a tensor that is not degenerate
// usually shows it in its first chunk.
template <typename U> bool any_nonzero(const Tensor& t, U mask) {
  std::atomic<bool> found{false};
  parallel_for(t.numel(), kScanChunk, [&](int64_t lo, int64_t hi) {
    if (!found.load(std::memory_order_relaxed) && any_bits(t.bytes(), lo, hi, mask)) found = true;
  });
  return found;
}

// Floats without the sign bit: -0.0 is zero, as it compares == 0; NaN is not.
bool any_nonzero(const Tensor& t) {
  switch (t.dtype()) {
    case DType::Float16: return any_nonzero<uint16_t>(t, 0x7fffu);
    case DType::Float32: return any_nonzero<uint32_t>(t, 0x7fffffffu);
    case DType::Float64: return any_nonzero<uint64_t>(t, 0x7fffffffffffffffu);
    case DType::Int32: return any_nonzero<uint32_t>(t, ~0u);
    case DType::Int64: return any_nonzero<uint64_t>(t, ~uint64_t(0));
    case DType::UInt8:
    case DType::Bool: return any_nonzero<uint8_t>(t, 0xffu);
  }
  return true;  // unreachable: every enumerator is handled above
}

}  // namespace

std::string index_text(const Shape& shape, int64_t flat) {
  const std::vector<int64_t> idx = unravel(shape, flat);
  std::string s = "[";
  for (size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + "]";
}

std::string mistrust_reason(const Tensor& expected) {
  if (expected.numel() == 0) return "no elements";
  if (any_nonzero(expected)) return "";
  return expected.dtype() == DType::Bool ? "A is all false" : "A is all zeros";
}

namespace {

constexpr int64_t kChunk = 1 << 16;

// Distance in units in the last place: the count of representable values between a and b.
template <typename T> int64_t ulp_distance(T a, T b) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    using I = std::conditional_t<std::is_same_v<T, float>, int32_t, int64_t>;
    I ia, ib;
    std::memcpy(&ia, &a, sizeof a);
    std::memcpy(&ib, &b, sizeof b);
    // Map the sign-magnitude encoding onto a monotonic integer line.
    const int64_t oa = ia < 0 ? int64_t(std::numeric_limits<I>::min()) - int64_t(ia) : int64_t(ia);
    const int64_t ob = ib < 0 ? int64_t(std::numeric_limits<I>::min()) - int64_t(ib) : int64_t(ib);
    // Far apart doubles of opposite signs are more than 2^63 units apart: the distance is taken
    // in unsigned arithmetic (exact below 2^64) and saturates.
    const uint64_t d = oa >= ob ? uint64_t(oa) - uint64_t(ob) : uint64_t(ob) - uint64_t(oa);
    return d > uint64_t(std::numeric_limits<int64_t>::max()) ? std::numeric_limits<int64_t>::max() : int64_t(d);
  } else {  // Half
    const auto order = [](uint16_t h) { return (h & 0x8000u) ? -int64_t(h & 0x7fffu) : int64_t(h); };
    const int64_t d = order(a.bits) - order(b.bits);
    return d < 0 ? -d : d;
  }
}

// One chunk's metrics. Where the chunk knows its worst element (and first NaN/Inf mismatch) it
// keeps both values, so a streamed comparison need not read them again.
struct Partial {
  int64_t finite = 0, bad = 0, worst = -1, max_ulp = 0, nonfinite = 0, first_nonfinite = -1;
  double max_abs = 0, sum_abs = 0, sum_sq = 0, max_rel = 0, dot = 0, na = 0, nb = 0;
  double worst_excess = -std::numeric_limits<double>::infinity(), worst_allowed = 0;
  double worst_a = 0, worst_b = 0, nonfinite_a = 0, nonfinite_b = 0;
};

// Element i against the tolerance (the per-element bound, when there is one, evaluated only
// where atol + rtol*|x| is exceeded), kept as the chunk's worst when its excess over what is
// allowed is the largest so far (the first of equals). Whether it is beyond tolerance.
inline bool judge_element(const Tolerance& tol, int64_t i, double x, double y, double d, Partial& p) {
  double allowed = tol.atol + tol.rtol * std::fabs(x);
  if (d > allowed && tol.bound) {
    // Within the bound's floor, the element passes; its excess over the floor is at least its
    // excess over the bound, so the bound is needed only where that could beat the worst so far.
    const bool floored = i < tol.floor_count && (!tol.floor_holds || tol.floor_holds->get());
    const double floor = floored ? allowed + tol.bound_floor * std::min(std::fabs(x), std::fabs(y)) : allowed;
    allowed = d <= floor && d - floor <= p.worst_excess ? floor : allowed + tol.bound(i);
  }
  if (d - allowed > p.worst_excess) p.worst_excess = d - allowed, p.worst = i, p.worst_allowed = allowed, p.worst_a = x, p.worst_b = y;
  return d > allowed;
}

// The scalar pass over elements [lo, hi); a and b point at element lo.
template <typename T> Partial float_chunk(const T* a, const T* b, const Tolerance& tol, int64_t lo, int64_t hi) {
  Partial p;
  for (int64_t i = lo; i < hi; ++i) {
    const T& ai = a[i - lo];
    const T& bi = b[i - lo];
    double x, y;
    if constexpr (std::is_same_v<T, Half>) {
      x = half_to_float(ai), y = half_to_float(bi);
    } else {
      x = ai, y = bi;
    }
    if (!std::isfinite(x) || !std::isfinite(y)) {
      const bool same = (std::isnan(x) && std::isnan(y)) || x == y;  // NaN with NaN, Inf of one sign
      if (!same) {
        ++p.bad;
        if (p.nonfinite++ == 0) p.first_nonfinite = i, p.nonfinite_a = x, p.nonfinite_b = y;
        // No tolerance applies: the first such element is the worst, with nothing allowed.
        constexpr double inf = std::numeric_limits<double>::infinity();
        if (p.worst_excess < inf) p.worst_excess = inf, p.worst = i, p.worst_allowed = 0, p.worst_a = x, p.worst_b = y;
      }
      continue;
    }
    ++p.finite;
    const double d = std::fabs(x - y);
    p.max_abs = std::max(p.max_abs, d);
    p.sum_abs += d;
    p.sum_sq += d * d;
    if (x != 0) p.max_rel = std::max(p.max_rel, d / std::fabs(x));
    p.dot += x * y, p.na += x * x, p.nb += y * y;
    p.max_ulp = std::max(p.max_ulp, ulp_distance(ai, bi));
    p.bad += judge_element(tol, i, x, y, d, p);
  }
  return p;
}

// float32 without NaN/Inf, the common case, in one branch-free pass the compiler vectorises
// (AVX-512 or AVX2 with FMA where the CPU has them; -fopenmp-simd lets it reorder the sums): the
// metrics, the count beyond atol + rtol*|a|, and the largest excess over it. Elements beyond it
// when a per-element bound exists are left to apply_bound, and the index of the worst element to
// a second look at the one chunk that holds it.
// Returns false when the chunk holds NaN or Inf.
// a and b point at the chunk's first element; n elements.
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) bool fast_f32_chunk(const float* a, const float* b,
                                                                                                 float atol, float rtol, int64_t n,
                                                                                                 Partial& p) {
  // Sums in float64, of the same terms float_chunk adds: float32 sums drift by ~1e-5 over a
  // chunk, enough to report a cosine of 1.000001 for vectors that are not parallel. The
  // products of two floats are exact in float64, so only the additions round, and a fused
  // multiply-add gives the bits of a multiply then an add, in one instruction (the default
  // clone, for a CPU without FMA, calls libm's). The extremes and the tolerance test stay in
  // float32, where the lanes are twice as many.
  double sum_abs = 0, sum_sq = 0, dot = 0, na = 0, nb = 0;
  float max_abs = 0, max_rel = 0, max_excess = -std::numeric_limits<float>::infinity();
  uint32_t max_ulp = 0, exponents = 0;
  int32_t bad = 0;
#pragma omp simd reduction(+ : sum_abs, sum_sq, dot, na, nb, bad) reduction(| : exponents) \
    reduction(max : max_abs, max_rel, max_excess, max_ulp)
  for (int64_t i = 0; i < n; ++i) {
    const float x = a[i], y = b[i];
    const auto bx = __builtin_bit_cast(int32_t, x), by = __builtin_bit_cast(int32_t, y);
    // An exponent of all ones (NaN, Inf) carries into the sign bit.
    exponents |= ((uint32_t(bx) & 0x7f800000u) + 0x00800000u) | ((uint32_t(by) & 0x7f800000u) + 0x00800000u);
    const float d = std::fabs(x - y), ax = std::fabs(x);
    max_abs = d > max_abs ? d : max_abs;
    const double xd = x, yd = y, dd = std::fabs(xd - yd);
    sum_abs += dd;
    sum_sq += dd * dd;  // dd may carry more than 26 bits: its square rounds, so no FMA here
    dot = __builtin_fma(xd, yd, dot), na = __builtin_fma(xd, xd, na), nb = __builtin_fma(yd, yd, nb);
    const float rel = d / (ax > 0 ? ax : 1.0f);  // the divisor is never 0: no branch needed
    max_rel = (ax > 0 && rel > max_rel) ? rel : max_rel;
    // Floats mapped onto a monotonic integer line (sign and magnitude to two's complement), -0
    // and +0 onto one point, as ulp_distance does: the ULP distance is a difference there.
    const int32_t sx = bx >> 31, sy = by >> 31;
    const int32_t ox = ((bx & 0x7fffffff) ^ sx) - sx, oy = ((by & 0x7fffffff) ^ sy) - sy;
    const uint32_t ulp = ox > oy ? uint32_t(ox) - uint32_t(oy) : uint32_t(oy) - uint32_t(ox);
    max_ulp = ulp > max_ulp ? ulp : max_ulp;
    const float excess = d - (atol + rtol * ax);
    bad += excess > 0;
    max_excess = excess > max_excess ? excess : max_excess;
  }
  if (exponents & 0x80000000u) return false;
  p.finite = n, p.bad = bad, p.max_ulp = max_ulp;
  p.max_abs = max_abs, p.sum_abs = sum_abs, p.sum_sq = sum_sq, p.max_rel = max_rel, p.dot = dot, p.na = na, p.nb = nb;
  p.worst_excess = max_excess;  // p.worst (the index) is found later, in the one chunk that needs it
  return true;
}

// judge_element over elements [lo, hi) of a chunk the fast pass took (all finite), in order, into
// p: the count beyond tolerance and the first element of the largest excess. Block by block: a
// block needs no per-element bound where no element exceeds atol + rtol*|a| (or none exists),
// and its excesses (float64, computed as judge_element does: no contraction, so the lanes round
// as the scalar code) give its largest in one vector pass; that value's first element is looked
// for only when it beats the worst so far. A block with an element beyond the defaults and a
// bound takes the scalar path, where the bound's evaluation costs far more than the loop. a and
// b point at element lo. The result is the scalar loop's, to the bit.
__attribute__((target_clones("avx512f", "avx2", "default"))) void judge_elements(const float* a, const float* b,
                                                                                 const Tolerance& tol, int64_t lo, int64_t hi,
                                                                                 Partial& p) {
  constexpr int64_t kBlock = 256;
  const double atol = tol.atol, rtol = tol.rtol;
  for (int64_t s = lo; s < hi; s += kBlock) {
    const float *x = a + (s - lo), *y = b + (s - lo);
    const int64_t m = std::min(kBlock, hi - s);
    int32_t beyond = 0;
    double top = -std::numeric_limits<double>::infinity();
#pragma omp simd reduction(+ : beyond) reduction(max : top)
    for (int64_t i = 0; i < m; ++i) {
      const double xi = x[i], yi = y[i];
      const double excess = std::fabs(xi - yi) - (atol + rtol * std::fabs(xi));
      beyond += excess > 0;
      top = excess > top ? excess : top;
    }
    if (beyond > 0 && tol.bound) {
      for (int64_t i = 0; i < m; ++i) {
        const double xi = x[i], yi = y[i];
        p.bad += judge_element(tol, s + i, xi, yi, std::fabs(xi - yi), p);
      }
      continue;
    }
    p.bad += beyond;
    if (top > p.worst_excess) {
      for (int64_t i = 0; i < m; ++i) {
        const double xi = x[i], yi = y[i], d = std::fabs(xi - yi), allowed = atol + rtol * std::fabs(xi);
        if (d - allowed == top) {
          p.worst_excess = top, p.worst = s + i, p.worst_allowed = allowed, p.worst_a = xi, p.worst_b = yi;
          break;
        }
      }
    }
  }
}

// A chunk whose metrics the fast pass filled in, where some element exceeds atol + rtol*|a| and a
// per-element bound exists: the count beyond tolerance and the worst element, with the bound
// evaluated only where the defaults are exceeded, in float64 as float_chunk does.
// a and b point at element lo.
void apply_bound(const float* a, const float* b, const Tolerance& tol, int64_t lo, int64_t hi, Partial& p) {
  p.bad = 0, p.worst = -1, p.worst_excess = -std::numeric_limits<double>::infinity();
  judge_elements(a, b, tol, lo, hi, p);
}

// The worst element of a chunk the fast pass took (all finite), as float_chunk finds it: its
// index, values and allowance. The chunk's metrics, and its excess as the fast pass measured it
// (which orders the chunks), stay as they are. a and b point at element lo.
void pin_worst(const float* a, const float* b, const Tolerance& tol, int64_t lo, int64_t hi, Partial& p) {
  Partial w;
  judge_elements(a, b, tol, lo, hi, w);
  p.worst = w.worst, p.worst_allowed = w.worst_allowed, p.worst_a = w.worst_a, p.worst_b = w.worst_b;
}

// Elements [lo, hi) of both sides (a and b point at element lo): the fast pass where it applies.
template <typename T> Partial chunk_partial(const T* a, const T* b, const Tolerance& tol, int64_t lo, int64_t hi) {
  if constexpr (std::is_same_v<T, float>) {
    Partial p;
    if (fast_f32_chunk(a, b, float(tol.atol), float(tol.rtol), hi - lo, p)) {
      if (p.bad > 0 && tol.bound) apply_bound(a, b, tol, lo, hi, p);
      return p;
    }
  }
  return float_chunk(a, b, tol, lo, hi);
}

// Cauchy-Schwarz holds only in exact arithmetic: rounding can put the quotient an ULP or so
// beyond [-1, 1], which would read as better than identical.
double cosine(double dot, double na, double nb) {
  if (na == 0 && nb == 0) return 1;
  if (na == 0 || nb == 0) return 0;
  return std::clamp(dot / (std::sqrt(na) * std::sqrt(nb)), -1.0, 1.0);
}

// Chunk by chunk in order, then the whole: the metrics, the worst element and the verdict. Both
// the comparison of tensors in memory and the streamed one end here, so they agree to the bit.
class FloatResult {
 public:
  FloatResult(const Shape& shape, const Tolerance& tol) : shape_(shape), tol_(tol) {}

  void add(const Partial& p) { parts_.push_back(p); }
  std::vector<Partial>& parts() { return parts_; }

  // `scalar_again(lo, hi)`: the scalar pass over one chunk again, for the worst element when it
  // lies in a chunk the fast pass took (null where every such chunk had it pinned);
  // `a_mistrust`: mistrust_reason of A, asked only when the elements agree.
  TensorDiff finish(const std::function<Partial(int64_t lo, int64_t hi)>& scalar_again, const std::function<std::string()>& a_mistrust) {
    TensorDiff r;
    r.count = shape_.numel();
    Partial t;
    for (const Partial& p : parts_) {  // in chunk order: the same result on any thread count
      t.finite += p.finite, t.bad += p.bad, t.sum_abs += p.sum_abs, t.sum_sq += p.sum_sq;
      t.dot += p.dot, t.na += p.na, t.nb += p.nb;
      t.max_abs = std::max(t.max_abs, p.max_abs), t.max_rel = std::max(t.max_rel, p.max_rel);
      t.max_ulp = std::max(t.max_ulp, p.max_ulp);
      t.nonfinite += p.nonfinite;
      if (t.first_nonfinite < 0 && p.first_nonfinite >= 0) t.first_nonfinite = p.first_nonfinite, t.nonfinite_a = p.nonfinite_a, t.nonfinite_b = p.nonfinite_b;
      if (p.worst_excess > t.worst_excess) {
        t.worst_excess = p.worst_excess, t.worst = p.worst, t.worst_allowed = p.worst_allowed, t.worst_a = p.worst_a, t.worst_b = p.worst_b;
      }
    }
    r.max_abs = t.max_abs, r.max_rel = t.max_rel, r.max_ulp = t.max_ulp, r.bad = t.bad;
    r.mean_abs = t.finite ? t.sum_abs / double(t.finite) : 0;
    r.rmse = t.finite ? std::sqrt(t.sum_sq / double(t.finite)) : 0;
    r.cosine = cosine(t.dot, t.na, t.nb);
    r.nonfinite_mismatches = t.nonfinite;
    if (t.nonfinite > 0) {
      // The metrics above cover the finite elements only, where the sides may well agree.
      r.max_abs = std::numeric_limits<double>::infinity();
      r.cosine = std::numeric_limits<double>::quiet_NaN();
    }
    if (t.worst < 0 && t.finite > 0) {
      // The worst element lies in a chunk that took the fast pass (the first chunk when no
      // excess rose above -inf, as with an atol beyond float32's range): find it there. A
      // streamed comparison pinned that chunk while it was at hand and has no scalar_again;
      // where pinning found no element, neither would the scalar pass.
      size_t c = 0;
      for (size_t k = 0; k < parts_.size(); ++k) c = parts_[k].worst_excess > parts_[c].worst_excess ? k : c;
      const int64_t lo = int64_t(c) * kChunk;
      const Partial p = scalar_again ? scalar_again(lo, std::min(r.count, lo + kChunk)) : parts_[c];
      t.worst = p.worst, t.worst_allowed = p.worst_allowed, t.worst_a = p.worst_a, t.worst_b = p.worst_b;
    }
    r.worst_index = t.worst;
    r.worst_allowed = t.worst_allowed;
    if (t.worst >= 0) r.worst_a = t.worst_a, r.worst_b = t.worst_b;
    if (r.nonfinite_mismatches > 0) {
      r.state = State::Failed;
      r.reason = std::to_string(r.nonfinite_mismatches) + " NaN/Inf positions differ, first at " + index_text(shape_, t.first_nonfinite) +
                 ": A " + shortest_double(t.nonfinite_a) + ", B " + shortest_double(t.nonfinite_b);
    } else if (r.bad > 0) {
      r.state = State::Failed;
      r.reason = std::to_string(r.bad) + " of " + std::to_string(r.count) + " elements out of tolerance (" + tol_.str() +
                 "), worst at " + index_text(shape_, r.worst_index) + ": A " + shortest_double(r.worst_a) + ", B " +
                 shortest_double(r.worst_b);
    } else {
      r.reason = a_mistrust();
      if (!r.reason.empty()) r.state = State::Mistrusted;
    }
    return r;
  }

 private:
  Shape shape_;
  const Tolerance& tol_;
  std::vector<Partial> parts_;
};

TensorDiff compare_floats(const Tensor& a, const Tensor& b, const Tolerance& tol) {
  FloatResult result(a.shape(), tol);
  result.parts().resize(size_t(chunk_count(a.numel(), kChunk)));
  std::function<Partial(int64_t, int64_t)> scalar_again;
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, Half>) {
      const T *pa = a.data<T>(), *pb = b.data<T>();
      parallel_for(a.numel(), kChunk, [&](int64_t lo, int64_t hi) { result.parts()[size_t(lo / kChunk)] = chunk_partial(pa + lo, pb + lo, tol, lo, hi); });
      scalar_again = [pa, pb, &tol](int64_t lo, int64_t hi) { return float_chunk(pa + lo, pb + lo, tol, lo, hi); };
    }
  });
  return result.finish(scalar_again, [&a] { return mistrust_reason(a); });
}

}  // namespace

struct TensorCompareStream::Running {
  Running(DType d, const Shape& s, Tolerance t) : dtype(d), shape(s), tol(std::move(t)), result(s, tol) {}
  DType dtype;
  Shape shape;
  Tolerance tol;
  FloatResult result;
  int64_t next = 0;            // elements fed so far
  bool a_nonzero = false;      // A holds an element that is not ±0 (mistrust_reason's test)
  // The largest excess of the chunks fed so far: a chunk beyond it may hold the worst element,
  // so its index is found while the chunk is at hand (finish then never reads a chunk again).
  double worst_excess = -std::numeric_limits<double>::infinity();
};

TensorCompareStream::TensorCompareStream(DType dtype, const Shape& shape, Tolerance tol)
    : s_(std::make_unique<Running>(dtype, shape, std::move(tol))) {
  if (!is_floating(dtype)) throw Error("a streamed comparison takes floats, not " + std::string(dtype_name(dtype)));
}

TensorCompareStream::~TensorCompareStream() = default;

int64_t TensorCompareStream::piece_elements() { return 4 * kChunk; }

void TensorCompareStream::feed(const std::byte* a, const std::byte* b, int64_t count) {
  Running& s = *s_;
  visit_dtype(s.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, Half>) {
      const T *pa = reinterpret_cast<const T*>(a), *pb = reinterpret_cast<const T*>(b);
      for (int64_t off = 0; off < count; off += kChunk) {
        const int64_t lo = s.next + off, hi = lo + std::min(kChunk, count - off);
        Partial p = chunk_partial(pa + off, pb + off, s.tol, lo, hi);
        if constexpr (std::is_same_v<T, float>) {
          // FloatResult::finish takes the first chunk of the largest excess: only a chunk that
          // raises the largest so far can be it, or the first chunk (where every excess is -inf).
          if (p.worst < 0 && p.finite > 0 && (p.worst_excess > s.worst_excess || lo == 0)) pin_worst(pa + off, pb + off, s.tol, lo, hi, p);
        }
        s.worst_excess = std::max(s.worst_excess, p.worst_excess);
        s.result.add(p);
      }
      if (!s.a_nonzero) {
        using U = std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;
        s.a_nonzero = any_bits<U>(a, 0, count, U(~U(0) >> 1));  // without the sign bit: -0.0 is zero
      }
    }
  });
  s.next += count;
}

TensorDiff TensorCompareStream::finish() {
  Running& s = *s_;
  TensorDiff r = s.result.finish(nullptr, [&] { return s.next == 0 ? "no elements" : s.a_nonzero ? "" : "A is all zeros"; });
  if (r.worst_index >= 0) r.worst_nd = unravel(s.shape, r.worst_index);
  return r;
}

namespace {

TensorDiff compare_exact(const Tensor& a, const Tensor& b) {
  TensorDiff r;
  r.count = a.numel();
  const size_t item = dtype_size(a.dtype());
  for (int64_t i = 0; i < r.count; ++i) {
    const std::byte* pa = a.bytes() + size_t(i) * item;
    if (std::memcmp(pa, b.bytes() + size_t(i) * item, item) != 0) {
      if (r.bad++ == 0) r.worst_index = i;
    }
  }
  if (r.worst_index >= 0) {
    r.worst_a = element_as_double(a, r.worst_index), r.worst_b = element_as_double(b, r.worst_index);
    r.state = State::Failed;
    r.reason = std::to_string(r.bad) + " of " + std::to_string(r.count) + " elements differ, first at " +
               index_text(a.shape(), r.worst_index) + ": A " + shortest_double(r.worst_a) + ", B " + shortest_double(r.worst_b);
    r.max_abs = std::fabs(r.worst_a - r.worst_b);
  } else {
    r.reason = mistrust_reason(a);
    if (!r.reason.empty()) r.state = State::Mistrusted;
  }
  return r;
}

}  // namespace

TensorDiff compare_tensors(const Tensor& a, const Tensor& b, const Tolerance& tol) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
    TensorDiff r;
    r.state = State::Failed;
    r.structural = true;
    r.reason = "A is " + std::string(dtype_name(a.dtype())) + " " + a.shape().str() + ", B is " +
               std::string(dtype_name(b.dtype())) + " " + b.shape().str();
    return r;
  }
  TensorDiff r = is_floating(a.dtype()) ? compare_floats(a, b, tol) : compare_exact(a, b);
  if (r.worst_index >= 0) r.worst_nd = unravel(a.shape(), r.worst_index);
  return r;
}

}  // namespace parity
