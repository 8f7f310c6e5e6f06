// The precision judgement (compare/precision.h) on the exact conv2d shapes of YOLOv5 n..x:
// no correct float32 summation order ever fails, reduced precision is told apart and passes
// under its own profile, and real defects fail under every profile. The same sampled layers
// make the ACCURACY.md tables (parity_accuracy_table).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cases/case_file.h"
#include "compare/tolerance.h"
#include "core/error.h"
#include "conv_variants.h"

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
  int named = 0;
  for (const Case& c : convs_of("yolov5s")) {
    const ConvShape s = parse_conv_shape(c.line);
    const SampledVerdict r = judge_sampled(sample_layer(s, Data::Yolo, variants), 0, precision_profile(Precision::Bf16));
    EXPECT_EQ(r.stats.worst_channel, s.OC / 2) << describe(c, Data::Yolo, Variant::ChannelBias, Precision::Bf16, r);
    named += r.stats.rms_ratio <= kRmsThreshold && r.stats.channel_ratio > kChannelRmsThreshold;
  }
  EXPECT_GT(named, 0) << "no layer needed the channel test: it is untested here";
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
  EXPECT_EQ(conv2d_bound_scale(100, precision_profile(Precision::Fp32)), 102 * 0x1p-24);
  EXPECT_GT(conv2d_bound_scale(100, precision_profile(Precision::Tf32)), 2 * 0x1p-11);
}

}  // namespace
}  // namespace parity::test
