// The precision judgement (compare/precision.h) on the exact conv2d shapes of YOLOv5 n..x:
// no correct float32 summation order ever fails, reduced precision is told apart and passes
// under its own profile, and real defects fail under every profile. The same sampled layers
// make the ACCURACY.md tables (parity_accuracy_table).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <string>
#include <vector>

#include "cases/case_file.h"
#include "compare/tolerance.h"
#include "core/error.h"
#include "compare/judge.h"
#include "conv_variants.h"
#include "core/half.h"
#include "kernels/backend.h"
#include "runners/inputs.h"

namespace parity::test {
namespace {

std::vector<Case> convs_of(const std::string& file) {
  std::vector<Case> out;
  for (const Case& c : read_case_file(std::string(PARITY_SOURCE_DIR) + "/cases/" + file + ".cases")) {
    if (c.line.rfind("conv2d", 0) == 0) out.push_back(c);
  }
  return out;
}

const Precision kProfiles[] = {Precision::Fp32, Precision::Tf32, Precision::Fp16, Precision::Bf16};

std::string describe(const Case& c, Data d, Variant v, Precision p, const SampledVerdict& r) {
  return c.name + " (" + c.line + "), " + data_name(d) + " data, " + variant_name(v) + " under " + precision_profile(p).name +
         ": element-wise " + (r.elementwise_ok ? "ok" : "beyond the bound") + ", rms ratio " + std::to_string(r.stats.rms_ratio) +
         ", channel ratio " + std::to_string(r.stats.channel_ratio);
}

TEST(Precision, NoCorrectFloat32OrderFailsOnAnyYolov5Conv) {
  const std::vector<Variant> variants = correct_float32_variants();
  int judged = 0;
  for (const char* model : {"yolov5n", "yolov5s", "yolov5m", "yolov5l", "yolov5x"}) {
    for (const char* suffix : {"", "-b32"}) {
      for (const Case& c : convs_of(std::string(model) + suffix)) {
        for (Data d : {Data::Yolo, Data::SameSign}) {
          // 16 channels x 8 elements a layer here (32 in the tables), to keep ctest short.
          const SampledLayer l = sample_layer(parse_conv_shape(c.line), d, variants, 16);
          for (size_t v = 0; v < variants.size(); ++v) {
            // A coarser profile never fails what a finer one passes.
            for (Precision p : kProfiles) {
              const SampledVerdict r = judge_sampled(l, v, precision_profile(p));
              ++judged;
              EXPECT_TRUE(r.passed()) << describe(c, d, variants[v], p, r);
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(judged, 864 * 2 * 6 * 4);  // every conv of the ten case files
}

TEST(Precision, ReducedPrecisionFailsFloat32AndPassesItsOwnProfileOnEveryYolov5sConv) {
  const std::vector<Variant> variants = {Variant::Tf32, Variant::Fp16, Variant::Bf16};
  // Which profiles each must fail and pass (bfloat16 is coarser than TF32 and float16).
  const std::vector<std::vector<Precision>> fail = {{Precision::Fp32}, {Precision::Fp32}, {Precision::Fp32, Precision::Tf32}};
  const std::vector<Precision> pass = {Precision::Tf32, Precision::Fp16, Precision::Bf16};
  const std::vector<Case> convs = convs_of("yolov5s");
  ASSERT_EQ(convs.size(), 60u);
  for (const Case& c : convs) {
    const SampledLayer l = sample_layer(parse_conv_shape(c.line), Data::Yolo, variants);
    for (size_t v = 0; v < variants.size(); ++v) {
      for (Precision p : fail[v]) {
        const SampledVerdict r = judge_sampled(l, v, precision_profile(p));
        EXPECT_FALSE(r.passed()) << describe(c, Data::Yolo, variants[v], p, r);
      }
      const SampledVerdict own = judge_sampled(l, v, precision_profile(pass[v]));
      EXPECT_TRUE(own.passed()) << describe(c, Data::Yolo, variants[v], pass[v], own);
      // The effective precision names the format: 10 bits for TF32 and float16, 7 for bfloat16.
      const SampledVerdict f32 = judge_sampled(l, v, precision_profile(Precision::Fp32));
      const double bits = variants[v] == Variant::Bf16 ? 7 : 10;
      EXPECT_NEAR(f32.stats.bits, bits + 0.5, 1.0) << describe(c, Data::Yolo, variants[v], Precision::Fp32, f32);
      // Spread over every channel: the hint names the format, never a channel.
      const std::string hint = reduced_precision_hint(f32.stats, precision_profile(Precision::Fp32));
      EXPECT_NE(hint.find("consistent with"), std::string::npos) << hint << "; " << describe(c, Data::Yolo, variants[v], Precision::Fp32, f32);
    }
  }
}

TEST(Precision, DefectsFailUnderEveryProfileOnEveryYolov5sConv) {
  const std::vector<Variant> variants = {Variant::KTail, Variant::ChannelBias};
  for (const Case& c : convs_of("yolov5s")) {
    const SampledLayer l = sample_layer(parse_conv_shape(c.line), Data::Yolo, variants);
    for (size_t v = 0; v < variants.size(); ++v) {
      for (Precision p : kProfiles) {
        const SampledVerdict r = judge_sampled(l, v, precision_profile(p));
        EXPECT_FALSE(r.passed()) << describe(c, Data::Yolo, variants[v], p, r);
      }
    }
  }
}

TEST(Precision, ABiasErrorInOneChannelIsNamedByTheChannelTest) {
  // Layers where the whole-layer rms stays under its threshold: the channel's own rms names it.
  const std::vector<Variant> variants = {Variant::ChannelBias};
  int named = 0, concentrated = 0;
  for (const Case& c : convs_of("yolov5s")) {
    const ConvShape s = parse_conv_shape(c.line);
    const SampledVerdict r = judge_sampled(sample_layer(s, Data::Yolo, variants), 0, precision_profile(Precision::Bf16));
    EXPECT_EQ(r.stats.worst_channel, s.OC / 2) << describe(c, Data::Yolo, Variant::ChannelBias, Precision::Bf16, r);
    named += r.stats.rms_ratio <= kRmsThreshold && r.stats.channel_ratio > kChannelRmsThreshold;
    // Whatever bits the layer averages to, a one-channel error is never taken for reduced precision.
    const SampledVerdict f32 = judge_sampled(sample_layer(s, Data::Yolo, variants), 0, precision_profile(Precision::Fp32));
    const std::string hint = reduced_precision_hint(f32.stats, precision_profile(Precision::Fp32));
    EXPECT_EQ(hint.find("consistent with"), std::string::npos) << hint;
    concentrated += hint.find("concentrate in channel " + std::to_string(s.OC / 2)) != std::string::npos;
  }
  EXPECT_GT(named, 0) << "no layer needed the channel test: it is untested here";
  EXPECT_GT(concentrated, 0) << "no layer's hint named the channel: the concentration rule is untested here";
}

TEST(Precision, EffectiveBitsOfCorrectFloat32) {
  // A blocked FMA kernel (the common CPU and GPU shape) against the float64 judge on yolov5s.
  const std::vector<Variant> variants = {Variant::Blocked16Fma, Variant::Pairwise};
  for (const Case& c : convs_of("yolov5s")) {
    const SampledLayer l = sample_layer(parse_conv_shape(c.line), Data::Yolo, variants);
    for (size_t v = 0; v < variants.size(); ++v) {
      const SampledVerdict r = judge_sampled(l, v, precision_profile(Precision::Fp32));
      EXPECT_GE(r.stats.bits, 20) << describe(c, Data::Yolo, variants[v], Precision::Fp32, r);
      EXPECT_EQ(r.stats.looks_like(), "float32");
    }
  }
}

TEST(Precision, ProfilesParseAndOrder) {
  EXPECT_EQ(parse_precision("tf32"), Precision::Tf32);
  EXPECT_THROW(parse_precision("fp8"), Error);
  EXPECT_EQ(coarser(Precision::Fp32, Precision::Fp16), Precision::Fp16);
  EXPECT_EQ(coarser(Precision::Tf32, Precision::Fp16), Precision::Fp16);
  EXPECT_EQ(coarser(Precision::Bf16, Precision::Fp16), Precision::Bf16);
  EXPECT_EQ(precision_of(DType::Float16), Precision::Fp16);
  // The bound widens by the input rounding of the profile, and only then.
  EXPECT_EQ(dot_product_bound_scale(100, precision_profile(Precision::Fp32)), 102 * 0x1p-24);
  EXPECT_GT(dot_product_bound_scale(100, precision_profile(Precision::Tf32)), 2 * 0x1p-11);
}

}  // namespace
}  // namespace parity::test

namespace parity::test {
namespace {

// A float16 side (its inputs and outputs stored as float16) against a float32 one: judged widened
// under the fp16 profile, not failed as structural; a real defect on the float16 side still fails.
// A bias of Inf makes every exact output Inf. Two sides that both give finite outputs, 1.0
// apart, are both wrong: the bound must not grow infinite and pass them against each other.
TEST(Precision, InfiniteBiasLeavesNoInfiniteBound) {
  Case c;
  c.name = "layer", c.line = "conv2d x=1x4x6x6 w=8x4x3x3 bias pad=1";
  std::vector<Tensor> in = seeded_inputs(c, 5);
  in[2] = in[2].clone();
  for (int64_t i = 0; i < in[2].numel(); ++i) in[2].mutable_data<float>()[i] = std::numeric_limits<float>::infinity();
  Tensor a = backend("ref").run(c.line, seeded_inputs(c, 5))[0].clone(), b = a.clone();  // finite: the bias as seeded
  for (int64_t i = 0; i < b.numel(); ++i) b.mutable_data<float>()[i] += 1.0f;
  auto side = [&](Tensor out) {
    LayerSide s;
    s.line = c.line, s.roles = {"out0"}, s.outputs = {std::move(out)};
    s.inputs = [in] { return in; };
    return s;
  };
  const LayerVerdict v = judge_layer(c.name, side(a), side(b), true, JudgeOptions{});
  EXPECT_EQ(v.state, State::Failed) << v.reason;
  EXPECT_EQ(v.defective(), Sides::Both) << v.reason;
}

// A float32 conv (A) against the same conv in float16 (B: inputs and output rounded to float16),
// with x and the bias scaled by `scale`; then B with bias[3] off by `defect`.
std::pair<LayerVerdict, LayerVerdict> float16_against_float32(float scale, float defect) {
  Case c;
  c.name = "layer", c.line = "conv2d x=1x16x8x8 w=8x16x3x3 bias pad=1";
  std::vector<Tensor> in = seeded_inputs(c, 7);
  for (size_t k : {size_t(0), size_t(2)}) {
    for (int64_t i = 0; i < in[k].numel(); ++i) in[k].mutable_data<float>()[i] *= scale;
  }
  auto to_half = [](const Tensor& t) {
    Tensor h(DType::Float16, t.shape());
    for (int64_t i = 0; i < t.numel(); ++i) h.mutable_data<Half>()[i] = float_to_half(t.data<float>()[i]);
    return h;
  };
  std::vector<Tensor> in16;
  for (const Tensor& t : in) in16.push_back(to_half(t));
  std::vector<Tensor> in16_as32;  // what the float16 kernel computes on: exactly the float16 values
  for (const Tensor& t : in16) {
    Tensor f(DType::Float32, t.shape());
    for (int64_t i = 0; i < t.numel(); ++i) f.mutable_data<float>()[i] = half_to_float(t.data<Half>()[i]);
    in16_as32.push_back(f);
  }
  auto side = [&](const std::vector<Tensor>& inputs, Tensor out) {
    LayerSide s;
    s.line = c.line, s.roles = {"out0"}, s.outputs = {std::move(out)};
    s.inputs = [inputs] { return inputs; };
    return s;
  };
  const Tensor out32 = backend("ref").run(c.line, in)[0];
  const Tensor out16 = to_half(backend("ref").run(c.line, in16_as32)[0]);
  std::vector<Tensor> bad_bias = in16_as32;
  bad_bias[2] = bad_bias[2].clone();
  bad_bias[2].mutable_data<float>()[3] += defect;
  const Tensor bad16 = to_half(backend("ref").run(c.line, bad_bias)[0]);
  return {judge_layer(c.name, side(in, out32), side(in16, out16), false, JudgeOptions{}),
          judge_layer(c.name, side(in, out32), side(in16, bad16), false, JudgeOptions{})};
}

TEST(Precision, Float16DumpAgainstFloat32IsJudgedUnderFp16) {
  const auto [ok, bad] = float16_against_float32(1, 0.05f);
  EXPECT_EQ(ok.profile, Precision::Fp16);
  EXPECT_NE(ok.widened.find("A float32, B float16: compared in float64 under fp16"), std::string::npos) << ok.widened;
  EXPECT_EQ(ok.state, State::Passed) << ok.reason;
  EXPECT_FALSE(ok.structural);
  EXPECT_EQ(bad.state, State::Failed) << bad.reason;
  EXPECT_EQ(bad.defective(), Sides::B) << bad.reason;
}

TEST(Precision, Float16OutputsNearZeroRoundOnItsSubnormalGrid) {
  // Outputs of 1e-6 and less (random-weight MobileNet activations under autocast, on an H200):
  // float16 holds them 2^-24 apart, an error no relative model of rounding allows.
  const auto [ok, bad] = float16_against_float32(1e-6f, 2e-5f);
  EXPECT_EQ(ok.profile, Precision::Fp16);
  EXPECT_EQ(ok.state, State::Passed) << ok.reason;
  EXPECT_EQ(bad.state, State::Failed) << bad.reason;
  EXPECT_EQ(bad.defective(), Sides::B) << bad.reason;
}

// Outputs beyond float16's largest finite value (65504) are Inf in a float16 run: a model whose
// values do not fit the type, said so at the layer where it first overflows.
TEST(Precision, Float16OverflowIsSaidAtItsLayer) {
  const std::string line = "conv2d x=1x4x2x2 w=2x4x1x1";
  auto filled = [](DType dtype, const Shape& shape, float v) {
    Tensor t(dtype, shape);
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (dtype == DType::Float16) t.mutable_data<Half>()[i] = float_to_half(v);
      else t.mutable_data<float>()[i] = v;
    }
    return t;
  };
  // Four terms of 30000: 120000 exactly, which float16 holds as Inf.
  const std::vector<Tensor> in32 = {filled(DType::Float32, Shape{1, 4, 2, 2}, 3e4f), filled(DType::Float32, Shape{2, 4, 1, 1}, 1)};
  const std::vector<Tensor> in16 = {filled(DType::Float16, Shape{1, 4, 2, 2}, 3e4f), filled(DType::Float16, Shape{2, 4, 1, 1}, 1)};
  auto side = [&](const std::vector<Tensor>& inputs, Tensor out) {
    LayerSide s;
    s.line = line, s.roles = {"out0"}, s.outputs = {std::move(out)};
    s.inputs = [inputs] { return inputs; };
    return s;
  };
  const LayerVerdict over = judge_layer("conv", side(in32, filled(DType::Float32, Shape{1, 2, 2, 2}, 1.2e5f)),
                                        side(in16, filled(DType::Float16, Shape{1, 2, 2, 2}, INFINITY)), false, JudgeOptions{});
  EXPECT_EQ(over.state, State::Failed) << over.reason;
  EXPECT_EQ(over.defective(), Sides::B) << over.reason;
  EXPECT_NE(over.reason.find("this run overflows float16"), std::string::npos) << over.reason;
  // Not said where the side did not run in float16 (a float32 run judged at fp16), nor for an Inf
  // of the other sign: both are defects, named, with no excuse.
  JudgeOptions fp16;
  fp16.precision = Precision::Fp16;
  const LayerVerdict float32_inf = judge_layer("conv", side(in32, filled(DType::Float32, Shape{1, 2, 2, 2}, 1.2e5f)),
                                               side(in32, filled(DType::Float32, Shape{1, 2, 2, 2}, INFINITY)), true, fp16);
  const LayerVerdict negative = judge_layer("conv", side(in32, filled(DType::Float32, Shape{1, 2, 2, 2}, 1.2e5f)),
                                            side(in16, filled(DType::Float16, Shape{1, 2, 2, 2}, -INFINITY)), false, JudgeOptions{});
  for (const LayerVerdict* v : {&float32_inf, &negative}) {
    EXPECT_EQ(v->state, State::Failed) << v->reason;
    EXPECT_EQ(v->defective(), Sides::B) << v->reason;
    EXPECT_EQ(v->reason.find("overflows"), std::string::npos) << v->reason;
  }
  // A call parity has no op for, judged by LibTorch (a model.half() run's sum of logits, on an H200).
  const std::string sum = "torch.sum in0=4";
  auto sum_side = [&](Tensor x, Tensor out) {
    LayerSide s;
    s.line = sum, s.roles = {"out0"}, s.outputs = {std::move(out)};
    s.inputs = [x] { return std::vector<Tensor>{x}; };
    return s;
  };
  const LayerVerdict summed = judge_layer("sum", sum_side(filled(DType::Float32, Shape{4}, 3e4f), filled(DType::Float32, Shape{}, 1.2e5f)),
                                          sum_side(filled(DType::Float16, Shape{4}, 3e4f), filled(DType::Float16, Shape{}, INFINITY)), false,
                                          JudgeOptions{});
  EXPECT_EQ(summed.state, State::Failed) << summed.reason;
  EXPECT_EQ(summed.defective(), Sides::B) << summed.reason;
  EXPECT_NE(summed.reason.find("this run overflows float16"), std::string::npos) << summed.reason;
}

// fp16 autocast on a GPU: B records the float32 activation, and its conv rounds it to float16
// inside. Below float16's normals (2^-14) an input moves by up to 2^-25 whatever its size: Mask
// R-CNN's squeeze-excitation inputs of 1e-6 under autocast on an H200 were 8.5 times what a
// rounding relative to each input allows, and the correct CUDA side was named the origin.
TEST(Precision, Float16AutocastRoundsInputsOnItsSubnormalGrid) {
  Case c;
  c.name = "fc1", c.line = "conv2d x=2x672x1x1 w=168x672x1x1 bias";
  std::vector<Tensor> in = seeded_inputs(c, 11);
  for (size_t k : {size_t(0), size_t(2)}) {  // activations and outputs of 1e-6
    for (int64_t i = 0; i < in[k].numel(); ++i) in[k].mutable_data<float>()[i] *= 1e-6f;
  }
  // torchvision's init of a squeezing 1x1 conv: std sqrt(2 / fan_out) = 0.11 (0.18 here), not 1 / sqrt(fan_in)
  for (int64_t i = 0; i < in[1].numel(); ++i) in[1].mutable_data<float>()[i] *= 8.0f;
  auto rounded = [](const Tensor& t) {  // float16 values, kept in float32
    Tensor f = t.clone();
    for (int64_t i = 0; i < f.numel(); ++i) f.mutable_data<float>()[i] = half_to_float(float_to_half(f.data<float>()[i]));
    return f;
  };
  const Tensor out32 = backend("ref").run(c.line, in)[0];
  const Tensor out16 = rounded(backend("ref").run(c.line, {rounded(in[0]), rounded(in[1]), rounded(in[2])})[0]);
  Tensor bad16 = out16.clone();
  for (int64_t i = 3; i < bad16.numel(); i += 168) bad16.mutable_data<float>()[i] += 1e-6f;  // channel 3 off
  auto side = [&](Tensor out) {
    LayerSide s;
    s.line = c.line, s.roles = {"out0"}, s.outputs = {std::move(out)};
    s.inputs = [in] { return in; };
    return s;
  };
  JudgeOptions o;
  o.precision = Precision::Fp16;
  const LayerVerdict ok = judge_layer(c.name, side(out32), side(out16), false, o);
  EXPECT_EQ(ok.state, State::Passed) << ok.reason;
  const LayerVerdict bad = judge_layer(c.name, side(out32), side(bad16), false, o);
  EXPECT_EQ(bad.state, State::Failed) << bad.reason;
  EXPECT_EQ(bad.defective(), Sides::B) << bad.reason;
}

// One value rounded to float16 on one side and to bfloat16 on the other (two runs of two half
// types given the same float32 weights) is recognised element for element, subnormal float16
// values and float16's coarser rounding of tiny ones included; a value one bfloat16 unit off is not.
TEST(Precision, CoRoundedValuesOfTwoHalfTypes) {
  const int64_t n = 4096;
  Tensor f16(DType::Float32, Shape{n}), bf16(DType::Float32, Shape{n});
  for (int64_t i = 0; i < n; ++i) {
    // Magnitudes from 2^-30 (below float16's subnormals) to 2^10, both signs.
    const float v = float((i % 2 ? -1 : 1) * std::ldexp(1.0 + double(i % 97) / 97, int(i % 41) - 30));
    f16.mutable_data<float>()[i] = half_to_float(float_to_half(v));
    bf16.mutable_data<float>()[i] = round_mantissa(v, 7);
  }
  EXPECT_TRUE(is_co_rounded(f16, Precision::Fp16, bf16, Precision::Bf16));
  EXPECT_TRUE(is_co_rounded(bf16, Precision::Bf16, f16, Precision::Fp16));
  Tensor off = bf16.clone();
  float& w = off.mutable_data<float>()[1265];  // about 2^5: float16 and bfloat16 both normal
  int e = 0;
  std::frexp(w, &e);
  w += float(std::ldexp(2.0, e - 1 - 7));  // two bfloat16 units up
  EXPECT_FALSE(is_co_rounded(f16, Precision::Fp16, off, Precision::Bf16));
  // A weight zeroed on one side is no rounding of 0.0019 (zero's half unit is the subnormal step).
  Tensor zeroed = bf16.clone();
  zeroed.mutable_data<float>()[1265] = 0;
  f16.mutable_data<float>()[1265] = half_to_float(float_to_half(0.0019f));
  EXPECT_FALSE(is_co_rounded(f16, Precision::Fp16, zeroed, Precision::Bf16));
}

}  // namespace
}  // namespace parity::test
