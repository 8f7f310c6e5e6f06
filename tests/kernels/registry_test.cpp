// The registry: every op's line parses back to itself, runs by name on ref and aten, and refuses
// unknown names; cuda says why it cannot run here.
#include <gtest/gtest.h>

#include <cstring>

#include "kernel_test_util.h"
#include "kernels/op_traits.h"

namespace parity {
namespace {

// Lines the other tests run: a YOLOv5s stem conv and a SiLU.
const char* const kConv = "conv2d x=1x3x64x64 w=32x3x6x6 bias stride=2 pad=2";
const char* const kSilu = "silu x=1x32x32x32";

// Every registered op's example lines (its traits, kernels/<op>/<op>.cpp) read back to
// themselves and run by name on ref and aten. (parity_compare_tests judges their outputs.)
TEST(Registry, EveryOpsExamplesRunOnRefAndAten) {
  ASSERT_EQ(op_names().size(), op_table().size());
  for (const OpTraits& op : op_table()) {
    ASSERT_FALSE(op.examples.empty()) << op.name;
    for (const std::string& line : op.examples) {
      SCOPED_TRACE(line);
      EXPECT_EQ(canonical_line(line), line);
      EXPECT_EQ(op_name_of(line), op.name);
      for (const char* b : {"ref", "aten"}) {
        EXPECT_TRUE(backend(b).supports(op.name));
        std::vector<Tensor> in = test::seeded_inputs(line, 1, 0, 1);
        const std::vector<Tensor> out = backend(b).run(line, in);
        ASSERT_FALSE(out.empty());
        EXPECT_TRUE(out[0].defined());
      }
    }
  }
}

TEST(Registry, UnknownNamesAreListed) {
  try {
    backend("tpu");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("known: ref aten cuda aten:cuda aten:cuda-nocudnn faulty:<defect>[:<n>]"), std::string::npos) << e.what();
  }
  try {
    backend("ref").run("conv3d x=1", {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown op 'conv3d'"), std::string::npos) << e.what();
  }
}

TEST(Registry, CudaSaysWhyItCannotRun) {
  const Backend& cuda = backend("cuda");
  if (cuda.unavailable_reason().empty()) GTEST_SKIP() << "a GPU is present";
  EXPECT_THROW(cuda.run(kSilu, test::seeded_inputs(kSilu, 1)), Error);
}

// Issue 19: backends register themselves; the registry lists them in rank order, finds a family
// member by the longest prefix, refuses a name taken twice, and knows which run on the GPU.
TEST(Registry, BackendsRegisterThemselves) {
  EXPECT_TRUE(runs_on_gpu("cuda"));
  EXPECT_TRUE(runs_on_gpu("aten:cuda"));
  EXPECT_TRUE(runs_on_gpu("aten:cuda-nocudnn"));
  EXPECT_FALSE(runs_on_gpu("ref"));
  EXPECT_FALSE(runs_on_gpu("faulty:nan"));
  EXPECT_FALSE(runs_on_gpu("tpu"));

  // ref's silu, under another name (the factory may ask for another backend).
  auto table = [](const std::string& name) {
    auto b = std::make_unique<OpTableBackend>(name);
    const Backend& ref = backend("ref");
    b->add("silu", [&ref](const Call& c, const std::vector<Tensor>& in) { return ref.run(c, in); });
    return b;
  };
  register_backend("registry_test", table);
  register_backend_family("registry_test:", "registry_test:<x>", table, kPluginRank, Runs::OnGpu);
  register_backend_family("registry_test:deep:", "registry_test:deep:<y>", table);
  EXPECT_THROW(register_backend("ref", table), Error);
  EXPECT_THROW(register_backend_family("faulty:", "faulty:again", table), Error);

  const std::vector<std::string> names = backend_names();
  ASSERT_GE(names.size(), 9u);
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 6),
            (std::vector<std::string>{"ref", "aten", "cuda", "aten:cuda", "aten:cuda-nocudnn", "faulty:<defect>[:<n>]"}));
  EXPECT_EQ(std::vector<std::string>(names.end() - 3, names.end()),
            (std::vector<std::string>{"registry_test", "registry_test:<x>", "registry_test:deep:<y>"}));
  EXPECT_FALSE(runs_on_gpu("registry_test"));
  EXPECT_TRUE(runs_on_gpu("registry_test:a"));
  EXPECT_FALSE(runs_on_gpu("registry_test:deep:b"));  // the longer prefix wins

  // Made once per name and kept; each runs what it registered.
  const Backend& a = backend("registry_test:a");
  EXPECT_EQ(&a, &backend("registry_test:a"));
  EXPECT_NE(&a, &backend("registry_test:b"));
  EXPECT_EQ(a.name(), "registry_test:a");
  EXPECT_TRUE(a.supports("silu"));
  EXPECT_FALSE(a.supports("conv2d"));
  const std::vector<Tensor> in = test::seeded_inputs(kSilu, 1);
  const Tensor got = a.run(kSilu, in)[0], want = backend("ref").run(kSilu, in)[0];
  ASSERT_EQ(got.nbytes(), want.nbytes());
  EXPECT_EQ(std::memcmp(got.bytes(), want.bytes(), got.nbytes()), 0);
  try {
    a.run(kConv, test::seeded_inputs(kConv, 1));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("backend registry_test:a has no conv2d implementation"), std::string::npos) << e.what();
  }
}

// Replay's note: the aten backends say which nms they run; the others say nothing.
TEST(Registry, BackendNotes) {
  EXPECT_EQ(backend("ref").note("nms"), "");
  EXPECT_EQ(backend("aten").note("conv2d"), "");
  const std::string nms = backend("aten").note("nms");
  EXPECT_EQ(nms.rfind("aten nms: ", 0), 0u) << nms;
  EXPECT_EQ(backend("aten:cuda").note("nms"), nms);
}

}  // namespace
}  // namespace parity
