// parity replay and parity cases through the binary: flags, exit codes, dumps, inputs from files.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/npy.h"
#include "support/test_support.h"

namespace parity {
namespace {

using test::run_parity;

TEST(Replay, OneCaseFilterShardJsonAndDump) {
  test::TempDir dir;
  auto r = run_parity({"replay", "--case", "conv2d x=1x19x17x23 w=23x19x3x3 bias stride=2 pad=1 name=tail", "--vs", "aten"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("PASSED"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--case: 1 cases: 1 passed"), std::string::npos) << r.out;

  const std::string cases = std::string(PARITY_SOURCE_DIR) + "/cases/yolov5n.cases";
  r = run_parity({"replay", cases, "--filter", "^model\\.2\\.", "--shard", "1/2", "--json", dir.file("r.json"), "--dump",
                  dir.file("dump")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(test::read_text(dir.file("r.json")));
  const size_t rows = j["rows"].size();
  EXPECT_GT(rows, 3u);
  EXPECT_EQ(j["summary"]["passed"].get<size_t>(), rows);
  for (const auto& row : j["rows"]) EXPECT_EQ(row["name"].get<std::string>().rfind("model.2.", 0), 0u);
  // Both dumps are complete, list every case, and their input files agree.
  for (const char* side : {"a", "b"}) {
    const auto m = nlohmann::json::parse(test::read_text(dir.file(std::string("dump/") + side + "/manifest.json")));
    EXPECT_EQ(m["format"], "parity-dump");
    ASSERT_EQ(m["layers"].size(), rows);
    const auto& in0 = m["layers"][0]["inputs"][0];
    const Tensor t = read_npy(dir.file(std::string("dump/") + side + "/" + in0["file"].get<std::string>()));
    EXPECT_EQ(t.shape().dims(), in0["shape"].get<std::vector<int64_t>>());
  }
  // A second dump into the same folder is refused without --force.
  r = run_parity({"replay", cases, "--filter", "model.0.conv", "--dump", dir.file("dump")});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("not empty"), std::string::npos) << r.err;
  EXPECT_EQ(run_parity({"replay", cases, "--filter", "model.0.conv", "--dump", dir.file("dump"), "--force"}).exit_code, 0);
}

TEST(Replay, InputsFromFiles) {
  test::TempDir dir;
  Tensor x(DType::Float32, Shape{4});
  const float v[] = {-1, 0, 1, 2};
  std::copy(v, v + 4, x.mutable_data<float>());
  write_npy(dir.file("act.x.npy"), x);
  auto r = run_parity({"replay", "--case", "silu x=4 name=act", "--inputs", dir.path(), "--json", dir.file("r.json")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // A file of the wrong shape names itself.
  write_npy(dir.file("act.x.npy"), Tensor(DType::Float32, Shape{5}));
  r = run_parity({"replay", "--case", "silu x=4 name=act", "--inputs", dir.path()});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("act.x.npy: layer act: holds float32 5, the case needs float32 4"), std::string::npos) << r.err;
  // An index out of range in the given data is an error of the case, named with its layer.
  Tensor xs(DType::Float32, Shape{3, 2}), idx(DType::Int64, Shape{1});
  idx.mutable_data<int64_t>()[0] = 9;
  write_npy(dir.file("pick.x.npy"), xs);
  write_npy(dir.file("pick.idx.npy"), idx);
  r = run_parity({"replay", "--case", "index x=3x2 idx=1 name=pick", "--inputs", dir.path()});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("layer pick: index: idx[0] = 9 is out of range"), std::string::npos) << r.err;
}

// --inputs naming a dump: each case runs on the inputs the dump recorded for its layer (checked
// by hash), cases the dump did not run are SKIPPED with the reason, a damaged file is exit 3.
TEST(Replay, InputsFromADump) {
  test::TempDir dir;
  ASSERT_EQ(run_parity({"run", "yolov5n", "--img", "160", "--dump", dir.file("run")}).exit_code, 0);
  ASSERT_EQ(run_parity({"cases", "generate", "--model", "yolov5n", "--img", "160", "--out", dir.path()}).exit_code, 0);
  const std::string cases = dir.file("yolov5n.cases");
  auto r = run_parity({"replay", cases, "--filter", "^(model\\.2\\.|nms\\.x )", "--inputs", dir.file("run"), "--vs", "aten",
                       "--json", dir.file("r.json"), "--dump", dir.file("again")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(test::read_text(dir.file("r.json")));
  size_t passed = 0;
  for (const auto& row : j["rows"]) {
    if (row["name"] == "nms.x") {  // the run names its post-processing per image (nms.0.x), with data-dependent shapes
      EXPECT_EQ(row["state"], "SKIPPED");
      EXPECT_NE(row["reason"].get<std::string>().find("no layer nms.x in"), std::string::npos) << row;
    } else {
      EXPECT_EQ(row["state"], "PASSED") << row;
      ++passed;
    }
  }
  EXPECT_GT(passed, 3u);
  // The replayed inputs are the run's, byte for byte: their recorded hashes agree layer by layer.
  const auto run = nlohmann::json::parse(test::read_text(dir.file("run/manifest.json")));
  const auto again = nlohmann::json::parse(test::read_text(dir.file("again/a/manifest.json")));
  size_t matched = 0;
  for (const auto& l : again["layers"]) {
    for (const auto& k : run["layers"]) {
      if (k["name"] != l["name"]) continue;
      ASSERT_EQ(k["inputs"].size(), l["inputs"].size()) << l["name"];
      for (size_t i = 0; i < l["inputs"].size(); ++i) EXPECT_EQ(k["inputs"][i]["hash"], l["inputs"][i]["hash"]) << l["name"];
      ++matched;
    }
  }
  EXPECT_EQ(matched, passed);
  // A dump of another image size runs none of the calls: nothing checked, and why.
  r = run_parity({"replay", std::string(PARITY_SOURCE_DIR) + "/cases/yolov5n.cases", "--filter", "^model\\.0\\.", "--inputs",
                  dir.file("run")});
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_NE(r.out.find("layer model.0.conv of " + dir.file("run") + " runs 'conv2d x=1x3x160x160"), std::string::npos) << r.out;
  // A tampered input is caught by its hash.
  std::string x;
  for (const auto& k : run["layers"]) {
    if (k["name"] == "model.2.cv1.conv") x = dir.file("run/" + k["inputs"][0]["file"].get<std::string>());
  }
  ASSERT_FALSE(x.empty());
  std::string bytes = test::read_text(x);
  bytes[bytes.size() - 3] ^= 0x40;
  test::write_bytes(x, bytes);
  r = run_parity({"replay", cases, "--filter", "^model\\.2\\.cv1\\.conv ", "--inputs", dir.file("run")});
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.err.find(x), std::string::npos) << r.err;
  EXPECT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
}

TEST(Replay, UsageErrorsAndSkippedBackends) {
  const std::string cases = std::string(PARITY_SOURCE_DIR) + "/cases/yolov5n.cases";
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"replay"},
           {"replay", cases, "--case", "silu x=3"},
           {"replay", "/nonexistent.cases"},
           {"replay", cases, "--vs", "tpu"},
           {"replay", cases, "--shard", "3/2"},
           {"replay", "--case", "silu x=3 stride=2"}}) {
    const auto r = run_parity(bad);
    EXPECT_EQ(r.exit_code, 3) << bad.back() << r.out;
    EXPECT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
  }
  // Nothing checked is exit 4 (ctest: skipped), never a green 0: a filter that matches no case,
  // a backend that cannot run here, an op the backend lacks.
  auto r = run_parity({"replay", cases, "--filter", "no-such-layer"});
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  r = run_parity({"replay", "--case", "silu x=3", "--vs", "cuda"});
  if (r.out.find("NOTHING CHECKED") != std::string::npos) {
    EXPECT_EQ(r.exit_code, 4) << r.out;
    EXPECT_NE(r.out.find("SKIPPED"), std::string::npos) << r.out;
  } else {
    EXPECT_EQ(r.exit_code, 0) << r.out;  // a GPU is here: the case ran and passed
  }
}

TEST(Cases, GenerateImportAndCheck) {
  test::TempDir dir;
  auto r = run_parity({"cases", "generate", "--model", "yolov5n", "--img", "320", "--out", dir.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir.file("yolov5n.cases")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("yolov5n-b32.cases")));
  r = run_parity({"cases", "check", dir.file("yolov5n.cases")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("60 conv2d"), std::string::npos) << r.out;
  test::write_bytes(dir.file("bad.cases"), "silu x=3\nconv2d x=1x3x8x8 w=4x3x3x3 stride=two\n");
  r = run_parity({"cases", "check", dir.file("bad.cases")});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("bad.cases:2: conv2d: field stride=two: not an integer"), std::string::npos) << r.err;
  test::write_bytes(dir.file("t.json"),
                    "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::silu\", \"tid\": 1, \"ts\": 1, "
                    "\"dur\": 1, \"args\": {\"Input Dims\": [[2, 3]], \"Input type\": [\"float\"]}}]}");
  r = run_parity({"cases", "import", dir.file("t.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("silu x=2x3 name=trace.0.silu"), std::string::npos) << r.out;
  EXPECT_EQ(run_parity({"cases", "import", dir.file("absent.json")}).exit_code, 3);
  // A trace recorded without shapes gives no case: an error saying so, and no case file written.
  test::write_bytes(dir.file("noshapes.json"),
                    "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::silu\", \"tid\": 1, \"ts\": 1, "
                    "\"dur\": 1, \"args\": {}}]}");
  r = run_parity({"cases", "import", dir.file("noshapes.json"), "-o", dir.file("n.cases")});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("record_shapes=True"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("n.cases")));
}

// Issue 19: a user's backend from a plugin (tests/kernels/example_backend_plugin.cpp: `example`,
// silu only) runs beside the built-in ones; a file that is no plugin is one line naming it, exit 3.
TEST(Replay, BackendPlugin) {
  const std::string cases = std::string(PARITY_SOURCE_DIR) + "/cases/yolov5n.cases";
  auto r = run_parity({"replay", cases, "--filter", "^model\\.0\\.", "--backend-plugin", PARITY_EXAMPLE_PLUGIN, "--vs", "example"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("PASSED"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("model.0.act"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("backend example has no conv2d"), std::string::npos) << r.out;  // UNSUPPORTED
  EXPECT_NE(r.out.find("2 cases: 1 passed"), std::string::npos) << r.out;
  // As the judge too, and given twice (the second load does nothing).
  r = run_parity({"replay", "--case", "silu x=1x8x5x5", "--backend-plugin", PARITY_EXAMPLE_PLUGIN, "--backend-plugin",
                  PARITY_EXAMPLE_PLUGIN, "--backend", "example", "--vs", "aten", "--judge", "example"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // Without the plugin the name is unknown, and the plugin's backend is listed once loaded.
  r = run_parity({"replay", "--case", "silu x=4", "--vs", "example"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("unknown backend 'example'"), std::string::npos) << r.err;
  r = run_parity({"replay", "--case", "silu x=4", "--backend-plugin", PARITY_EXAMPLE_PLUGIN, "--vs", "tpu"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("faulty:<defect>[:<n>] example)"), std::string::npos) << r.err;

  test::TempDir dir;
  test::write_bytes(dir.file("text.so"), "not a shared library\n");
  for (const auto& [file, why] : std::vector<std::pair<std::string, std::string>>{
           {dir.file("missing.so"), "no such file"},
           {dir.file("text.so"), "cannot load it"},
           {PARITY_KERNELS_LIB, "not a backend plugin: it exports no parity_register_backends"}}) {
    r = run_parity({"replay", "--case", "silu x=4", "--backend-plugin", file, "--vs", "example"});
    EXPECT_EQ(r.exit_code, 3) << file;
    ASSERT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find("backend plugin " + file + ": " + why), std::string::npos) << r.err;
  }
  // Every command that takes a backend by name takes the flag.
  for (const std::vector<std::string>& cmd : std::vector<std::vector<std::string>>{
           {"run", "--help"}, {"bench", "--help"}, {"golden", "check", "--help"}, {"compare", "--help"}, {"bisect", "--help"}}) {
    r = run_parity(cmd);
    EXPECT_NE(r.out.find("--backend-plugin"), std::string::npos) << cmd[0] << "\n" << r.out;
  }
}

}  // namespace
}  // namespace parity
