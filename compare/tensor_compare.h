#pragma once
// Comparing one tensor of backend A (expected) with the same tensor of backend B (actual).
//
// Structure first: dtype, shape and element count must match, else the state is FAILED and
// `structural` is set. Floats: NaN and Inf positions must match, then every element must hold
// |a - b| <= atol + rtol * |a| + bound(i). Integers and bools: exact. A result whose expected
// side is degenerate (no elements, all zeros, all false) and that otherwise agrees is
// MISTRUSTED: it proves little about the kernel.
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace parity {

// UNCHECKED: outputs differ beyond tolerance and no local check could run (inputs not recorded,
// or the judge cannot run the call), so the difference is neither explained nor pinned on a side.
enum class State { Passed, Failed, Mistrusted, Skipped, Unsupported, Unchecked };
constexpr int kStateCount = 6;
const char* state_name(State s);  // "PASSED", ...

// A yes or no worked out once, by the first thread that asks, and then read by any.
class LazyAnswer {
 public:
  explicit LazyAnswer(std::function<bool()> work) : work_(std::move(work)) {}
  bool get() {
    std::call_once(once_, [this] { answer_ = work_(); });
    return answer_;
  }

 private:
  std::function<bool()> work_;
  std::once_flag once_;
  bool answer_ = false;
};

struct Tolerance {
  double atol = 0, rtol = 0;
  // Optional extra absolute allowance for element i (conv2d's reduction bound). Evaluated only
  // for elements that exceed atol + rtol * |a|, so it may be costly; must be thread-safe.
  std::function<double(int64_t)> bound;
  double bound_share = 1;  // `bound` is this share of the per-element bound (said by str())
  // A share of min(|a|, |b|) that `bound` never falls below where either side is right: a dot
  // product's S = sum |x*w| + |b| is at least |exact|. An element within atol + rtol*|a| plus
  // that share passes without `bound` being evaluated, unless it might be the worst element.
  // Only where both sides are wrong, each beyond the bound, could this pass what `bound` fails.
  // It holds for elements [0, floor_count) only (past them, an output the call cannot have made),
  // and only where `floor_holds` says yes (a dot product's terms all finite: an Inf among them
  // makes the exact value non-finite, and the bound 0), asked once, when an element first needs it.
  double bound_floor = 0;
  int64_t floor_count = 0;
  std::shared_ptr<LazyAnswer> floor_holds = nullptr;
  bool exact() const { return atol == 0 && rtol == 0 && !bound; }
  std::string str() const;  // "atol 1e-05 rtol 1.3e-06 + per-element bound"
};

struct TensorDiff {
  State state = State::Passed;
  bool structural = false;
  std::string reason;  // one line; empty when PASSED
  int64_t count = 0;
  // Floats, over elements where both sides are finite, summed in float64; cosine lies in [-1, 1].
  // Where NaN/Inf positions differ, max_abs is +infinity and cosine NaN, so that no summary
  // reads as agreement.
  double max_abs = 0, mean_abs = 0, max_rel = 0, rmse = 0, cosine = 1;
  int64_t max_ulp = 0;
  // Positions where A and B are not the same NaN or Inf: NaN or Inf against a number, +Inf
  // against -Inf. NaN against NaN is equal. They count in `bad` too.
  int64_t nonfinite_mismatches = 0;
  // Elements failing the tolerance (floats) or differing (integers, bools), and the worst one:
  // the first NaN/Inf mismatch, else the largest excess over its tolerance, or the first
  // mismatch for exact types.
  int64_t bad = 0, worst_index = -1;
  std::vector<int64_t> worst_nd;  // worst_index as coordinates; empty when none (or rank 0)
  double worst_a = 0, worst_b = 0;
  double worst_allowed = 0;  // the tolerance at the worst element (floats; 0 for NaN/Inf)
};

TensorDiff compare_tensors(const Tensor& a, const Tensor& b, const Tolerance& tol);

// compare_tensors for two tensors that arrive in pieces, in order (two files read through small
// buffers): the same figures to the bit, without holding either tensor. Floats only (float16,
// float32, float64), both sides of one dtype and shape.
class TensorCompareStream {
 public:
  TensorCompareStream(DType dtype, const Shape& shape, Tolerance tol);
  ~TensorCompareStream();
  TensorCompareStream(const TensorCompareStream&) = delete;
  TensorCompareStream& operator=(const TensorCompareStream&) = delete;
  // Every piece but the last holds this many elements.
  static int64_t piece_elements();
  // The next `count` elements of each side, as bytes.
  void feed(const std::byte* a, const std::byte* b, int64_t count);
  // Once every element was fed: the diff. Nothing is read again: the worst element is found
  // while its chunk is fed.
  TensorDiff finish();

 private:
  struct Running;  // the sums and the worst element so far
  std::unique_ptr<Running> s_;
};

// Why a tensor of expected values proves little when matched: "no elements", "A is all zeros"
// (floats: every element == 0, so -0.0 counts), "A is all false" (bool); "" when it is not
// degenerate. A branch-free scan that stops early, at memory speed, so it suits tensors found
// identical by hash and never compared element by element.
std::string mistrust_reason(const Tensor& expected);

// "[1, 0, 3]": a flat index as coordinates of `shape`.
std::string index_text(const Shape& shape, int64_t flat);

}  // namespace parity
