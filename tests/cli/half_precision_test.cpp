// YOLOv5 at half precision, as val.py runs it on a GPU (issue #40), through the binary on the CPU:
// `--dtype fp16|bf16` on replay and run, the reference against LibTorch's own half kernels, and a
// planted defect at half named at its layer. LibTorch 1.13's CPU has bfloat16 kernels for every
// op but nms, and float16 ones for few: those cases are UNSUPPORTED, never failures.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/half.h"
#include "core/npy.h"
#include "kernels/backend.h"
#include "kernels/call.h"
#include "kernels/seeded_inputs.h"
#include "support/test_support.h"

namespace parity {
namespace {

using test::run_parity;

std::string cases(const std::string& model) { return std::string(PARITY_SOURCE_DIR) + "/cases/" + model + ".cases"; }

TEST(HalfPrecision, CallCarriesItsPrecision) {
  const Call c("silu x=2x3 precision=bf16");
  EXPECT_EQ(c.half(), HalfType::Bf16);
  EXPECT_EQ(c.line(), "silu x=2x3 precision=bf16");
  EXPECT_EQ(Call(with_half("conv2d x=1x3x8x8 w=4x3x3x3 bias pad=1", HalfType::Fp16)).line(),
            "conv2d x=1x3x8x8 w=4x3x3x3 bias pad=1 precision=fp16");
  EXPECT_EQ(with_half(c.line(), HalfType::None), "silu x=2x3");
  EXPECT_THROW(Call("silu x=2x3 precision=fp8"), Error);
  EXPECT_THROW(Call("silu x=2x3 precision=bf16 precision=fp16"), Error);
  EXPECT_THROW(Call("silu x=2x3 dtype=float64 precision=bf16"), Error);  // a float64 call has no half form
}

TEST(HalfPrecision, InputsAreTheFloat32OnesRounded) {
  const std::string line = "conv2d x=1x3x8x8 w=4x3x3x3 bias pad=1";
  const std::vector<Tensor> f32 = seeded_inputs(line, 7), bf16 = seeded_inputs(with_half(line, HalfType::Bf16), 7);
  ASSERT_EQ(f32.size(), bf16.size());
  int64_t moved = 0;
  for (size_t k = 0; k < f32.size(); ++k) {
    for (int64_t i = 0; i < f32[k].numel(); ++i) {
      const float x = f32[k].data<float>()[i], y = bf16[k].data<float>()[i];
      EXPECT_EQ(y, round_to(x, HalfType::Bf16));
      EXPECT_LE(std::fabs(y - x), std::ldexp(std::fabs(x), -8));  // within half a unit of bf16's 8 bits
      moved += x != y;
    }
  }
  EXPECT_GT(moved, 0);
}

TEST(HalfPrecision, RoundingIsToNearestEven) {
  // 1 + 2^-8 lies halfway between bfloat16's 1 and 1 + 2^-7: to even, 1. 1 + 3 * 2^-8 lies halfway
  // between 1 + 2^-7 and 1 + 2^-6: to even, 1 + 2^-6.
  EXPECT_EQ(round_to(1.0f + 0x1p-8f, HalfType::Bf16), 1.0f);
  EXPECT_EQ(round_to(1.0f + 3 * 0x1p-8f, HalfType::Bf16), 1.0f + 0x1p-6f);
  EXPECT_EQ(round_to(1.0f + 0x1p-11f, HalfType::Fp16), 1.0f);
  EXPECT_EQ(round_to(65520.0f, HalfType::Fp16), INFINITY);  // past float16's largest, 65504
  // bfloat16 keeps float32's exponent range: 1e30 stays finite, within half a unit of its 8 bits.
  EXPECT_TRUE(std::isfinite(round_to(1e30f, HalfType::Bf16)));
  EXPECT_LE(std::fabs(round_to(1e30f, HalfType::Bf16) - 1e30f), std::ldexp(1e30f, -8));
}

TEST(HalfPrecision, ReplayRefAgainstLibTorchHalfKernels) {
  const auto bf16 = run_parity({"replay", cases("yolov5n"), "--vs", "aten", "--dtype", "bf16"});
  EXPECT_EQ(bf16.exit_code, 0) << bf16.out << bf16.err;
  EXPECT_NE(bf16.out.find("163 cases: 162 passed"), std::string::npos) << bf16.out;
  EXPECT_NE(bf16.out.find("UNSUPPORTED"), std::string::npos);  // nms: no bfloat16 kernel in LibTorch's CPU
  EXPECT_NE(bf16.out.find("dtype bf16"), std::string::npos);
  const auto fp16 = run_parity({"replay", cases("yolov5n"), "--vs", "aten", "--dtype", "fp16", "--filter", "model\\.2\\."});
  EXPECT_EQ(fp16.exit_code, 0) << fp16.out << fp16.err;
  EXPECT_EQ(fp16.out.find("FAILED"), std::string::npos) << fp16.out;
}

TEST(HalfPrecision, ReplayNamesADefectAtHalf) {
  for (const char* dtype : {"fp16", "bf16"}) {
    const auto r = run_parity({"replay", cases("yolov5n"), "--vs", "faulty:bias:20", "--dtype", dtype});
    EXPECT_EQ(r.exit_code, 1) << dtype << r.out << r.err;
    EXPECT_NE(r.out.find("FAILED          "), std::string::npos);
    EXPECT_NE(r.out.find("model.6.m.1.cv1.conv  conv2d x=1x64x40x40 w=64x64x1x1 bias precision=" + std::string(dtype)), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("1 failed"), std::string::npos) << r.out;
  }
}

TEST(HalfPrecision, RunCompareAndBisectAtBf16) {
  test::TempDir tmp;
  for (const char* b : {"ref", "aten", "faulty:bias:20"}) {
    const auto r = run_parity({"run", "yolov5n", "--img", "160", "--dtype", "bf16", "--backend", b, "--dump", tmp.file(std::string(b).substr(0, 6))});
    ASSERT_EQ(r.exit_code, 0) << b << r.err;
  }
  const auto clean = run_parity({"compare", tmp.file("ref"), tmp.file("aten")});
  EXPECT_EQ(clean.exit_code, 0) << clean.out;
  EXPECT_NE(clean.out.find("precision bf16 (auto: both runs recorded bf16)"), std::string::npos) << clean.out;
  const auto bisect = run_parity({"bisect", tmp.file("ref"), tmp.file("faulty")});
  EXPECT_EQ(bisect.exit_code, 1) << bisect.out;
  EXPECT_NE(bisect.out.find("origin: model.6.m.1.cv1.conv"), std::string::npos) << bisect.out;
  EXPECT_NE(bisect.out.find("defective: B"), std::string::npos) << bisect.out;
}

// The checked-in float16 pack (golden/fp16): the reference reproduces it, LibTorch's CPU runs what
// it has kernels for, and a planted bias is named at the stem conv.
TEST(HalfPrecision, GoldenPackAtFp16) {
  const std::string root = std::string(PARITY_SOURCE_DIR) + "/golden";
  const auto ref = run_parity({"golden", "check", "--backend", "ref", "--root", root, "--pack", "fp16"});
  EXPECT_EQ(ref.exit_code, 0) << ref.out << ref.err;
  EXPECT_NE(ref.out.find("6 layers in 1 packs: 6 passed"), std::string::npos) << ref.out;
  const auto aten = run_parity({"golden", "check", "--backend", "aten", "--root", root, "--pack", "fp16"});
  EXPECT_EQ(aten.exit_code, 0) << aten.out << aten.err;
  EXPECT_EQ(aten.out.find("FAILED"), std::string::npos) << aten.out;
  const auto bad = run_parity({"golden", "check", "--backend", "faulty:bias", "--root", root, "--pack", "fp16"});
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
  EXPECT_NE(bad.out.find("FAILED      fp16/stem"), std::string::npos) << bad.out;
}

// Found by an adversarial review: LibTorch's CPU lacks most float16 kernels, so `run --backend
// aten --dtype fp16` runs those layers in float32; their outputs are rounded to float16 (else the
// next layer's rounded input read as the model code feeding it otherwise: exit 2 on two correct
// runs), and the manifest names them.
TEST(HalfPrecision, RunAtFp16WhereLibTorchLacksKernels) {
  test::TempDir tmp;
  for (const char* b : {"ref", "aten"}) {
    const auto r = run_parity({"run", "yolov5n", "--img", "160", "--dtype", "fp16", "--backend", b, "--dump", tmp.file(b)});
    ASSERT_EQ(r.exit_code, 0) << b << r.err;
  }
  const auto c = run_parity({"compare", tmp.file("ref"), tmp.file("aten")});
  EXPECT_EQ(c.exit_code, 0) << c.out;
  // LibTorch as the judge lacks the same kernels: it judges those layers in float32, rounded.
  const auto by_aten = run_parity({"compare", tmp.file("ref"), tmp.file("aten"), "--judge", "aten"});
  EXPECT_EQ(by_aten.exit_code, 0) << by_aten.out;
  EXPECT_NE(test::read_text(tmp.file("aten") + "/manifest.json").find("\"float32_kernels\":\"conv2d,"), std::string::npos);
  // A float32 run against a half one of the same model: the same calls, judged at the half's precision.
  ASSERT_EQ(run_parity({"run", "yolov5n", "--img", "160", "--backend", "ref", "--dump", tmp.file("f32")}).exit_code, 0);
  const auto mixed = run_parity({"bisect", tmp.file("f32"), tmp.file("ref")});
  EXPECT_EQ(mixed.exit_code, 0) << mixed.out << mixed.err;
  EXPECT_NE(mixed.out.find("no divergence"), std::string::npos) << mixed.out;
}

// In float16, PyTorch compares scores with the threshold rounded to float16 (0.001 is 0.0010004):
// a score of exactly float16(0.001) is not above it. The reference did the comparison in float32.
TEST(HalfPrecision, ThresholdComparesInTheType) {
  test::TempDir tmp;
  Tensor x(DType::Float32, Shape{1, 4});
  const float v[] = {round_to(0.001f, HalfType::Fp16), 0.0011f, 0.5f, 0.0f};
  for (int i = 0; i < 4; ++i) x.mutable_data<float>()[i] = v[i];
  write_npy(tmp.file("nms.xc.x.npy"), x);
  const auto r = run_parity({"replay", "--case", "threshold x=1x4 value=0.001 name=nms.xc", "--inputs", tmp.path(), "--dtype", "fp16", "--vs", "aten"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("1 passed"), std::string::npos) << r.out;
}

// parity's own CUDA kernels have half forms (kernels/cuda_util.h, "Half precision"): with a GPU a
// half call runs and passes; without one the cuda backend is SKIPPED before anything runs. Never
// a failure, never UNSUPPORTED (that would be a float32 result rounded, passed off as half).
TEST(HalfPrecision, ProjectCudaKernelsRunHalfCalls) {
  const auto r = run_parity({"replay", "--case", "conv2d x=1x8x9x9 w=16x8x3x3 bias pad=1 precision=fp16", "--vs", "cuda"});
  if (r.out.find("SKIPPED") != std::string::npos) {
    EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  } else {
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("1 passed"), std::string::npos) << r.out;
  }
  EXPECT_EQ(r.out.find("UNSUPPORTED"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("FAILED"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace parity
