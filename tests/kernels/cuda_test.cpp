// The project's CUDA kernels against the CPU reference. Without a GPU (or without nvcc at build
// time) every GPU test is SKIPPED with the reason; what can be checked without one (the backend's
// registration and its refusal) still runs. The whole yolov5s batch-1 case file runs as the ctest
// replay_yolov5s_ref_vs_cuda.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/gpu.h"
#include "kernels/backend.h"
#include "kernels/conv2d/conv2d.h"
#include "kernels/silu/silu.h"
#include "runners/inputs.h"
#include "runners/replay.h"
#ifdef PARITY_HAVE_CUDA
#include "kernels/cuda_util.h"
#endif

namespace parity {
namespace {

#define SKIP_WITHOUT_GPU()                                                                  \
  do {                                                                                     \
    const std::string why = backend("cuda").unavailable_reason();                         \
    if (!why.empty()) GTEST_SKIP() << "SKIPPED: no CUDA backend here: " << why;            \
  } while (0)

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape().dims() == b.shape().dims() &&
         (a.nbytes() == 0 || std::memcmp(a.bytes(), b.bytes(), a.nbytes()) == 0);
}

TEST(CudaBackend, IsRegisteredAndSaysWhyItCannotRun) {
  const Backend& cuda = backend("cuda");
#ifdef PARITY_HAVE_CUDA
  for (const std::string& op : op_names()) EXPECT_TRUE(cuda.supports(op)) << op << " has no CUDA kernel";
#endif
  const std::string why = cuda.unavailable_reason();
  if (gpu_status().available) {
    EXPECT_TRUE(why.empty()) << why;
    return;
  }
  ASSERT_FALSE(why.empty());
  try {
    cuda.run("silu x=4", {Tensor(DType::Float32, Shape{4})});
    FAIL() << "ran without a GPU";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(why.substr(0, 20)), std::string::npos) << e.what();
  }
}

// Shapes with 17/19/23 tails, odd sizes, strides, padding, dilation and groups.
std::vector<std::string> random_lines(int count, uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](std::initializer_list<int64_t> v) { return *(v.begin() + rng() % v.size()); };
  std::vector<std::string> lines;
  for (int i = 0; i < count; ++i) {
    const int64_t n = pick({1, 2, 3}), c = pick({1, 3, 8, 17, 19, 23, 32, 64}), h = pick({1, 5, 7, 17, 19, 23, 40}),
                  w = pick({1, 6, 9, 17, 19, 23, 40});
    const int64_t g = (c % 2 == 0 && rng() % 3 == 0) ? 2 : 1, oc = pick({1, 16, 17, 19, 23, 64}) * g, k = pick({1, 3, 5, 6});
    const int64_t s = pick({1, 2}), pad = k / 2 - int64_t(rng() % 2) * (k / 2), dil = (k == 3 && rng() % 4 == 0) ? 2 : 1;
    const std::string x = std::to_string(n) + "x" + std::to_string(c) + "x" + std::to_string(h) + "x" + std::to_string(w);
    if (h + 2 * pad >= dil * (k - 1) + 1 && w + 2 * pad >= dil * (k - 1) + 1) {
      lines.push_back("conv2d x=" + x + " w=" + std::to_string(oc) + "x" + std::to_string(c / g) + "x" + std::to_string(k) + "x" +
                      std::to_string(k) + (rng() % 2 ? " bias" : "") + " stride=" + std::to_string(s) + " pad=" + std::to_string(pad) +
                      " dilation=" + std::to_string(dil) + " groups=" + std::to_string(g));
    }
    lines.push_back("silu x=" + x);
    lines.push_back("sigmoid x=" + x);
    lines.push_back("add x=" + x);
    lines.push_back("mul x=" + x);
    lines.push_back("cat x=" + x + "," + std::to_string(n) + "x" + std::to_string(pick({1, 17, 19})) + "x" + std::to_string(h) + "x" +
                    std::to_string(w) + " dim=1");
    lines.push_back("maxpool2d x=" + x + " k=" + std::to_string(std::min(h, w) >= 5 ? 5 : 1) + " stride=1 pad=" +
                    std::to_string(std::min(h, w) >= 5 ? 2 : 0));
    lines.push_back("upsample_nearest2d x=" + x + " scale=2");
    lines.push_back("threshold x=" + x + " value=0.25");
    lines.push_back("nonzero x=" + x + " density=0.3");
    lines.push_back("max_dim x=" + std::to_string(h * w) + "x" + std::to_string(c) + " dim=1 keepdim");
    lines.push_back("argsort x=" + std::to_string(n * c * h) + (rng() % 2 ? " descending" : ""));
    lines.push_back("index x=" + std::to_string(h * w) + "x" + std::to_string(c) + " mask=" + std::to_string(h * w) + " density=0.4");
    lines.push_back("index x=" + std::to_string(h * w) + "x" + std::to_string(c) + " idx=" + std::to_string(n * 7));
    lines.push_back("index x=" + std::to_string(h) + "x" + std::to_string(w) + "x" + std::to_string(c) + " pairs=" + std::to_string(c));
    lines.push_back("nms boxes=" + std::to_string(c * h) + "x4 iou=0.45" + (rng() % 2 ? " batched" : ""));
    lines.push_back("detect_decode x=" + std::to_string(n) + "x255x" + std::to_string(h) + "x" + std::to_string(w) +
                    " stride=8 anchors=10,13,16,30,33,23");
  }
  return lines;
}

// Random shapes per test: 40, or PARITY_CUDA_TEST_LINES (scripts/gpu-check runs the tests under
// compute-sanitizer with a few, where each launch is hundreds of times slower).
int lines_per_test() {
  const char* v = std::getenv("PARITY_CUDA_TEST_LINES");
  const int n = v ? std::atoi(v) : 0;
  return n > 0 ? n : 40;
}

// Checked without a GPU too, so that the GPU tests never fail on a malformed line of their own.
TEST(CudaBackend, RandomCaseLinesAreValid) {
  for (uint32_t seed : {20261121u, 7u}) {
    for (const std::string& line : random_lines(40, seed)) EXPECT_NO_THROW(parse_case(line, "cuda_test")) << line;
  }
}

// Every random line, seeds 0 and 1, replayed ref against `name`: PASSED, or, where tiny random
// shapes give outputs too degenerate for replay to trust a pass (no elements, all zeros), the
// reference's bytes exactly.
void expect_every_op_matches_the_reference(const std::string& name) {
  ReplayOptions o;
  o.backend_a = "ref", o.backend_b = name;
  for (const std::string& line : random_lines(lines_per_test(), 20261121)) {
    const Case c = parse_case(line, "cuda_test");
    for (uint64_t seed : {0u, 1u}) {
      o.seed = seed;
      const CaseResult r = replay_case(c, o);
      if (r.state == State::Mistrusted) {
        const std::vector<Tensor> in = seeded_inputs(c, seed);
        const std::vector<Tensor> a = backend("ref").run(c.line, in), b = backend(name).run(c.line, in);
        ASSERT_EQ(a.size(), b.size()) << line;
        for (size_t k = 0; k < a.size(); ++k) EXPECT_TRUE(same_bytes(a[k], b[k])) << line << " (seed " << seed << ") output " << k;
        continue;
      }
      EXPECT_EQ(r.state, State::Passed) << name << ": " << line << " (seed " << seed << "): " << r.reason;
    }
  }
}

TEST(Cuda, EveryOpMatchesTheReferenceOnRandomShapes) {
  SKIP_WITHOUT_GPU();
  expect_every_op_matches_the_reference("cuda");
}

// LibTorch's CUDA kernels (the aten:cuda backends): listed everywhere, refusing with the reason
// where the LibTorch parity was built against has no CUDA (Debian's) or sees no GPU.
TEST(AtenCudaBackend, IsRegisteredAndSaysWhyItCannotRun) {
  for (const char* name : {"aten:cuda", "aten:cuda-nocudnn"}) {
    const Backend& b = backend(name);
    for (const std::string& op : op_names()) EXPECT_TRUE(b.supports(op)) << name << " lacks " << op;
    const std::string why = b.unavailable_reason();
    if (why.empty()) continue;  // it can run: AtenCuda.* check its results
    try {
      b.run("silu x=4", {Tensor(DType::Float32, Shape{4})});
      FAIL() << name << " ran although it says: " << why;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
}

// The skip message differs from SKIP_WITHOUT_GPU's, which ctest reads as "the whole binary
// skipped": parity's kernels may run where LibTorch's cannot.
#define SKIP_WITHOUT_ATEN_CUDA()                                                             \
  do {                                                                                      \
    const std::string why = backend("aten:cuda").unavailable_reason();                      \
    if (!why.empty()) GTEST_SKIP() << "SKIPPED: LibTorch cannot run on a GPU here: " << why; \
  } while (0)

TEST(AtenCuda, EveryOpMatchesTheReferenceOnRandomShapes) {
  SKIP_WITHOUT_ATEN_CUDA();
  expect_every_op_matches_the_reference("aten:cuda");
  // ATen's own CUDA convolution (slow_conv2d), the one a user's modified PyTorch build changes.
  ReplayOptions o;
  o.backend_a = "ref", o.backend_b = "aten:cuda-nocudnn";
  for (const std::string& line : random_lines(lines_per_test(), 20261121)) {
    if (op_name_of(line) != "conv2d") continue;
    const CaseResult r = replay_case(parse_case(line, "cuda_test"), o);
    EXPECT_EQ(r.state, State::Passed) << line << ": " << r.reason;
  }
}

// Data movement, selection, sorting and NMS must be bit-exact, not merely within tolerance.
TEST(Cuda, IndexingSelectionAndNmsAreBitExact) {
  SKIP_WITHOUT_GPU();
  for (const std::string& line : random_lines(lines_per_test(), 7)) {
    const std::string op = op_name_of(line);
    if (op == "conv2d" || op == "silu" || op == "sigmoid" || op == "detect_decode") continue;
    const Case c = parse_case(line, "cuda_test");
    const std::vector<Tensor> in = seeded_inputs(c, 3);
    const std::vector<Tensor> a = backend("ref").run(c.line, in), b = backend("cuda").run(c.line, in);
    ASSERT_EQ(a.size(), b.size()) << line;
    for (size_t k = 0; k < a.size(); ++k) EXPECT_TRUE(same_bytes(a[k], b[k])) << line << " output " << k;
  }
  // YOLOv5's worst case: 30000 candidates, classes offset by 7680, many exact score ties.
  const Case big = parse_case("nms boxes=30000x4 iou=0.6 batched", "cuda_test");
  std::vector<Tensor> in = seeded_inputs(big, 0);
  float* scores = in[1].mutable_data<float>();
  for (int64_t i = 0; i < 30000; i += 3) scores[i] = 0.5f;
  EXPECT_TRUE(same_bytes(backend("ref").run(big.line, in)[0], backend("cuda").run(big.line, in)[0]));
}

// A half call (precision=fp16|bf16) runs parity's half kernels: every random line in both types
// judged against the reference at that precision, and bit for bit where the reference's result
// is the correctly rounded one too (all but the convolution, the exponentials and add, whose
// float32 sum the reference rounds twice).
TEST(Cuda, EveryOpMatchesTheReferenceAtHalfPrecision) {
  SKIP_WITHOUT_GPU();
  ReplayOptions o;
  o.backend_a = "ref", o.backend_b = "cuda";
  for (HalfType h : {HalfType::Fp16, HalfType::Bf16}) {
    for (const std::string& line : random_lines(lines_per_test(), 20261127)) {
      const Case c = parse_case(with_half(line, h), "cuda_test");
      const std::string op = op_name_of(line);
      const std::vector<Tensor> in = seeded_inputs(c, 5);
      if (op != "conv2d" && op != "silu" && op != "sigmoid" && op != "detect_decode" && op != "add") {
        const std::vector<Tensor> a = backend("ref").run(c.line, in), b = backend("cuda").run(c.line, in);
        ASSERT_EQ(a.size(), b.size()) << c.line;
        for (size_t k = 0; k < a.size(); ++k) EXPECT_TRUE(same_bytes(a[k], b[k])) << c.line << " output " << k;
        continue;
      }
      o.seed = 5;
      const CaseResult r = replay_case(c, o);
      if (r.state == State::Mistrusted) {  // NaN or Inf on a side: then only the same bytes pass
        const std::vector<Tensor> a = backend("ref").run(c.line, in), b = backend("cuda").run(c.line, in);
        for (size_t k = 0; k < a.size(); ++k) EXPECT_TRUE(same_bytes(a[k], b[k])) << c.line << " output " << k;
        continue;
      }
      EXPECT_EQ(r.state, State::Passed) << c.line << ": " << r.reason;
    }
  }
}

// conv2d's launch paths, each replayed against the reference in float32 and in both half types
// (small, so that racecheck finishes):
// K split across blocks (few output tiles, K in the thousands; a last slice shorter than the
// others; with and without bias), 64- and 128-row tiles, several tiles each way, groups with
// split K, a K shorter than one step, dilation with stride.
TEST(Cuda, ConvLaunchPathsMatchTheReference) {
  SKIP_WITHOUT_GPU();
  ReplayOptions o;
  o.backend_a = "ref", o.backend_b = "cuda";
  for (const char* line : {"conv2d x=1x256x6x6 w=130x256x3x3 bias pad=1", "conv2d x=1x100x7x7 w=200x100x3x3 pad=1",
                           "conv2d x=1x64x9x9 w=64x16x3x3 bias pad=1 groups=4", "conv2d x=2x3x64x64 w=32x3x6x6 bias stride=2 pad=2",
                           "conv2d x=3x64x40x40 w=256x64x1x1 bias", "conv2d x=1x5x13x11 w=130x5x1x1 bias",
                           "conv2d x=2x17x19x23 w=19x17x3x3 stride=2 pad=2 dilation=2",
                           "conv2d x=1x512x4x4 w=256x128x3x3 pad=1 groups=4"}) {
    for (HalfType h : {HalfType::None, HalfType::Fp16, HalfType::Bf16}) {
      const CaseResult r = replay_case(parse_case(with_half(line, h), "cuda_test"), o);
      EXPECT_EQ(r.state, State::Passed) << with_half(line, h) << ": " << r.reason;
    }
  }
}

TEST(Cuda, OutOfRangeIndexIsTheReferenceError) {
  SKIP_WITHOUT_GPU();
  const Case c = parse_case("index x=10x4 idx=3", "cuda_test");
  std::vector<Tensor> in = seeded_inputs(c, 0);
  int64_t* idx = in[1].mutable_data<int64_t>();
  idx[0] = 1, idx[1] = -11, idx[2] = 10;
  std::string ref_error, cuda_error;
  try {
    backend("ref").run(c.line, in);
  } catch (const Error& e) {
    ref_error = e.what();
  }
  try {
    backend("cuda").run(c.line, in);
  } catch (const Error& e) {
    cuda_error = e.what();
  }
  EXPECT_FALSE(ref_error.empty());
  EXPECT_EQ(cuda_error, ref_error);
}

#ifdef PARITY_HAVE_CUDA
// The guard regions every op checks after its kernels: a write one byte outside is caught.
TEST(Cuda, GuardRegionsCatchWritesOutsideAnOutput) {
  SKIP_WITHOUT_GPU();
  cuda::DeviceBuffer b(100);
  ASSERT_EQ(cudaMemset(b.data(), 0, 100), cudaSuccess);
  EXPECT_NO_THROW(b.check_guards("inside"));
  ASSERT_EQ(cudaMemset(b.as<unsigned char>() + 100, 0, 1), cudaSuccess);
  EXPECT_THROW(b.check_guards("one past the end"), Error);
  cuda::DeviceBuffer c(64);
  ASSERT_EQ(cudaMemset(c.as<unsigned char>() - 1, 0, 1), cudaSuccess);
  EXPECT_THROW(c.check_guards("one before"), Error);
}
#endif

}  // namespace
}  // namespace parity
