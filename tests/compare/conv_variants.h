#pragma once
// Sampled conv2d output elements computed the ways real kernels compute them: float32 in every
// summation order, inputs rounded to TF32, float16 or bfloat16, and two defects. They feed the
// statistical test (compare/precision.h) on the exact shapes of YOLOv5 n..x, so that the tests
// and the ACCURACY.md tables (parity_accuracy_table) measure the same thing.
//
// Inputs are synthetic and generated per element from a counter-based hash, so no tensor is
// ever materialised and batch-32 layers cost what batch-1 layers do. Independent of the project's
// kernels: nothing here calls conv2d_ref or the tolerance code, only the judgement under test.
#include <cstdint>
#include <string>
#include <vector>

#include "compare/precision.h"

namespace parity::test {

// How the values look: "yolo" (the image in [0, 1] for 3-channel inputs, else SiLU of a
// normal; weights normal with variance 2/K; small biases) or "same-sign" (every product
// positive: the worst case for float32 accumulation).
enum class Data { Yolo, SameSign };
const char* data_name(Data d);

// One way of computing a dot product.
enum class Variant {
  Sequential,     // float32, one term after another, no FMA
  SequentialFma,  // float32, one fused multiply-add after another
  Pairwise,       // float32 products summed pairwise
  Blocked16Fma,   // 16 FMA lanes (SIMD-like), then the lanes summed
  SplitK4,        // four contiguous slices (split-K), each with FMA, reduced in float32
  Float64,        // float64 sum, rounded once
  Tf32,           // inputs rounded to TF32, then Blocked16Fma
  Fp16,           // inputs and output rounded to float16, Blocked16Fma
  Bf16,           // inputs and output rounded to bfloat16, Blocked16Fma
  KTail,          // float64 without the last term (a dropped K-tail)
  ChannelBias,    // float64, output channel OC/2 with its bias + 0.05
};
const char* variant_name(Variant v);
std::vector<Variant> correct_float32_variants();
std::vector<Variant> all_variants();

struct ConvShape {
  int64_t N, IC, H, W, OC, KH, KW, stride, pad;  // groups 1, dilation 1 (YOLOv5's convs)
  int64_t K() const { return IC * KH * KW; }
  int64_t OH() const { return (H + 2 * pad - KH) / stride + 1; }
  int64_t OW() const { return (W + 2 * pad - KW) / stride + 1; }
};
ConvShape parse_conv_shape(const std::string& line);  // a conv2d case line

// For each sampled element (`channels` output channels spread over OC, `per_channel` elements
// each): the judge's value (float64 sum rounded to float32), S, Q, and one value per variant.
struct SampledLayer {
  int64_t K = 0;
  std::vector<ReductionSample> base;         // expected, S, Q, channel (actual unset)
  std::vector<std::vector<double>> actual;   // [variant][sample]
};
SampledLayer sample_layer(const ConvShape& s, Data data, const std::vector<Variant>& variants, int64_t channels = 32,
                          int64_t per_channel = 8, uint64_t seed = 1);

// The verdict of the judgement under test on one variant of a sampled layer under a profile:
// the element-wise bound (atol + rtol |y| + bound_scale * S) and the statistical test.
struct SampledVerdict {
  bool elementwise_ok = true;
  PrecisionStats stats;
  bool passed() const { return elementwise_ok && !stats.failed; }
};
SampledVerdict judge_sampled(const SampledLayer& l, size_t variant_index, const PrecisionProfile& profile);

}  // namespace parity::test
