#pragma once
// Precision profiles and the layer-level statistical test (docs/DESIGN.md, "Precision").
//
// The element-wise bounds of compare/tolerance.h are worst cases: they never fail a correct
// kernel, and so they also pass one that rounds conv inputs to TF32 on the layers with a long
// reduction. This adds a second judgement per layer. Each sampled element's error e_i is
// divided by the standard deviation σ_i that rounding at the profile's precision can give it
// (the probabilistic rounding model: independent errors, each uniform within its rounding
// interval), and the layer fails when the root mean square of e_i / σ_i exceeds a threshold.
// For conv2d, with u = 2^-24, u_in the unit roundoff of the profile's conv inputs, u_out that of
// its outputs, K the reduction length, S_i = Σ|x·w| + |b| and Q_i = sqrt(Σ (x·w)²):
//   σ_i² = 2 · ( (2/3)·u_in²·Q_i²          inputs rounded to the profile (not for fp32)
//              + (1/3)·u²·Q_i²              each product rounded to float32
//              + (1/9)·u²·K·S_i²            float32 accumulation in any order: the worst case
//                                           (terms of one sign summed one by one) of Σ s_j²·u²/3
//              + (1/3)·u_out²·y_i²          the output rounded
//              + (1/3)·h²·(1 + W_i²) )      below float16's normals, where rounding is absolute
//                                           (h = 2^-25): the output, and each input float16 rounds
//                                           there (W_i² = Σ w² over those; for fp16 only)
// (2: both sides may round). A correct kernel has E[(e/σ)²] ≤ 1; inputs rounded to 10 bits give
// e ≈ 0.82 · 2^-11 · Q, which is ≥ 14000 / K times the float32 σ: caught for K up to ~3500.
//
// Effective precision: the mantissa bits the observed error corresponds to, if it came from
// rounding inputs (conv2d: e ≈ sqrt(2/3) · 2^-(p+1) · Q) or the result (other ops: e ≈ 2^-(p+1)
// · |y| / sqrt(3)) to p bits, taken norm-wise over the samples (‖e‖ against ‖scale‖, so that
// elements near zero do not dominate): ≈ 23 for float32, 10 for TF32 and float16, 7 for
// bfloat16. Against the judge, or in replay, it is the kernel's own; A against B in compare it
// also carries whatever difference the two sides' inputs already had.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "compare/tensor_compare.h"

namespace parity {

enum class Precision { Fp32, Tf32, Fp16, Bf16 };

struct PrecisionProfile {
  Precision id;
  const char* name;   // "fp32", as --precision spells it
  int input_bits;     // explicit mantissa bits of conv inputs: 23, 10, 10, 7
  int output_bits;    // of every op's output: 23 (fp32, tf32), 10, 7
  // The spacing of the smallest outputs: float16's subnormals are 2^-24 apart, so an output near 0
  // rounds by up to 2^-25 whatever its size (random-weight activations of 1e-8 do). 0 for
  // float32, TF32 and bfloat16, whose 2^-149 and 2^-133 never matter.
  double subnormal_spacing;
  double u_in() const;   // 2^-(input_bits + 1)
  double u_out() const;  // 2^-(output_bits + 1)
  // An input's rounding near 0 where inputs round to the profile (float16: 2^-25); 0 where they do not.
  double input_floor() const { return input_bits < 23 ? subnormal_spacing / 2 : 0.0; }
};

const PrecisionProfile& precision_profile(Precision p);
// "fp32" ...; throws parity::Error naming --precision for anything else.
Precision parse_precision(const std::string& name);
// The coarser of two (fp16 and tf32: fp16, whose outputs round too).
Precision coarser(Precision a, Precision b);
// The profile a dump of this float dtype was computed at, at least: float16 -> fp16, else fp32.
Precision precision_of(DType dtype);
// The profile of a call's half type (precision=fp16|bf16, kernels/call.h); fp32 for none.
Precision precision_of(HalfType half);
// The half type of a half profile (fp16, bf16); None for fp32 and tf32.
HalfType half_of(Precision p);
// Whether p is a half type's profile (fp16, bf16).
inline bool is_half(Precision p) { return p == Precision::Fp16 || p == Precision::Bf16; }
// `coarse` is `fine` element for element, each value as is or rounded to `p` (to nearest even:
// float16's range and mantissa, bfloat16's 7 or TF32's 10 mantissa bits); false for other counts.
bool is_rounded(const Tensor& fine, const Tensor& coarse, Precision p);
// `a` and `b` could be one value rounded to `pa` and to `pb` (fp16, bf16, tf32), element for
// element: each pair within half a unit of its own type of a common value.
bool is_co_rounded(const Tensor& a, Precision pa, const Tensor& b, Precision pb);

// The statistical test's thresholds on rms(e/σ): over the whole sample, and over the samples of
// any one output channel (a defect confined to one channel, a wrong bias, hides in the whole).
// σ is already a worst case for the accumulation order, so a correct kernel measures well below
// 1 (ACCURACY.md: the largest seen over YOLOv5 n..x in every summation order).
constexpr double kRmsThreshold = 4;
constexpr double kChannelRmsThreshold = 8;
// Samples per output channel at least, and in all at least kSamples.
constexpr int64_t kSamplesPerChannel = 8;

// One sampled conv2d output element: both values and the scales of its dot product.
struct ReductionSample {
  double expected, actual;
  double abs_sum;  // S_i = Σ|x·w| + |b|
  double rss;      // Q_i = sqrt(Σ (x·w)²)
  int64_t channel = 0;  // the output channel
  double weight_rss = 0;  // sqrt(Σ w²): what inputs rounded to float16's subnormals move it by
};

struct PrecisionStats {
  int64_t samples = 0;     // elements the figures come from
  bool exact = true;       // every sampled error is 0
  double bits = 0;         // effective mantissa bits (meaningless when exact)
  bool tested = false;     // the statistical test applies (conv2d)
  double rms_ratio = 0;    // rms(e_i / σ_i)
  int64_t worst_channel = -1;  // the channel with the largest rms(e_i / σ_i) over its samples
  double channel_ratio = 0;    // that rms
  bool failed = false;     // rms_ratio > kRmsThreshold or channel_ratio > kChannelRmsThreshold
  // What the bits look like: "float32", "TF32 or float16", "bfloat16", or "".
  std::string looks_like() const;
  // The table cell: "exact", "22.9", "10.1" (one decimal), "" without figures.
  std::string cell() const;
};

// The statistical test and effective bits of a reduction of length K.
PrecisionStats reduction_stats(const std::vector<ReductionSample>& samples, int64_t K, const PrecisionProfile& profile);

// Effective bits of an op whose error is relative to its result (every op but conv2d), from
// up to kSamples elements spread over the tensors; no statistical test. Floats of one shape.
PrecisionStats result_stats(const Tensor& expected, const Tensor& actual);
// Element values by flat index: a tensor's, or the few that a streamed comparison kept.
using ElementValues = std::function<double(int64_t element)>;
ElementValues values_of(const Tensor& t);
// The same over the n elements of a tensor given by its values.
PrecisionStats result_stats(int64_t n, const ElementValues& expected, const ElementValues& actual);

constexpr int64_t kSamples = 1024;
// A channel whose rms(e/σ) exceeds the layer's by this factor holds a defect, not rounding: with 8
// samples a channel, the largest of 512 channels' rms under uniform noise stays below 1.8×.
constexpr double kConcentration = 3.0;
// Indices of up to `m` elements spread evenly over n (all of them when n <= m), the same for
// every call with the same n.
std::vector<int64_t> sample_indices(int64_t n, int64_t m = kSamples);

// Why a conv2d layer failing the statistical test fails: the note the report shows.
std::string precision_failure_note(const PrecisionStats& s, const PrecisionProfile& profile);
// "effective precision ≈ 10.6 bits: consistent with TF32 inputs (torch.backends...)" when the
// bits are well below the profile's and look like a known reduced precision; "" otherwise.
std::string reduced_precision_hint(const PrecisionStats& s, const PrecisionProfile& profile);

}  // namespace parity
