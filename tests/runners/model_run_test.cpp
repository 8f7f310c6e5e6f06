// parity run's model runner: a yolov5n forward and post-processing on ref, its dump, weights
// from a folder and from a TorchScript archive, and bad options.
#include "runners/model_run.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cases/yolov5.h"
#include "core/error.h"
#include "core/npy.h"
#include "kernels/conv2d/conv2d.h"
#include "runners/weights.h"
#include "support/test_support.h"
#include "torchscript_writer.h"

namespace parity {
namespace {

nlohmann::json manifest(const std::string& dir) { return nlohmann::json::parse(test::read_text(dir + "/manifest.json")); }

// The outputs of every layer in a dump, by layer name.
std::map<std::string, Tensor> outputs_of(const std::string& dir) {
  std::map<std::string, Tensor> out;
  const nlohmann::json m = manifest(dir);  // kept alive: the loop walks a member of it
  for (const auto& l : m["layers"]) out[l["name"]] = read_npy(dir + "/" + l["outputs"][0]["file"].get<std::string>());
  return out;
}

TEST(ModelRun, DumpHoldsEveryLayerWithTheCaseShapes) {
  test::TempDir dir;
  RunOptions o;
  o.model = "yolov5n";
  o.img = 192;  // the smallest size whose seeded run keeps detections through nms
  o.dump_dir = dir.file("ref");
  const RunResult r = run_model(o);
  const auto m = manifest(o.dump_dir);
  EXPECT_EQ(m["format"], "parity-dump");
  EXPECT_EQ(m["backend"], "ref");
  const auto& layers = m["layers"];
  EXPECT_EQ(int64_t(layers.size()), r.layers);
  // The forward's layers line up with the generated cases, name for name and line for line.
  const std::vector<Case> cases = yolov5_forward(yolov5_variant("yolov5n"), 192, 1);
  ASSERT_GT(layers.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(layers[i]["name"], cases[i].name);
    EXPECT_EQ(layers[i]["params"], cases[i].line);
    if (layers[i]["op"] == "conv2d") {
      const Tensor y = read_npy(o.dump_dir + "/" + layers[i]["outputs"][0]["file"].get<std::string>());
      EXPECT_EQ(y.shape(), Conv2dParams::parse(cases[i].line).output_shape()) << cases[i].name;
    }
  }
  // Inputs produced by an earlier layer point at that layer's output file.
  const auto& act = layers[1];  // model.0.act
  EXPECT_EQ(act["inputs"][0]["source"], "model.0.conv:out0");
  EXPECT_EQ(act["inputs"][0]["file"], layers[0]["outputs"][0]["file"]);
  // Post-processing layers follow: nms.xc, then nms.0.*; activations stay of order one.
  EXPECT_EQ(layers[cases.size()]["name"], "nms.xc");
  EXPECT_EQ(r.detections.size(), 1u);
  EXPECT_GT(r.detections[0], 0);
  EXPECT_GT(r.dump_bytes, 0);
  EXPECT_LE(r.dump_bytes, r.estimated_bytes);
  // A second run into the same folder is refused, then allowed with force.
  EXPECT_THROW(run_model(o), Error);
  o.force = true;
  EXPECT_NO_THROW(run_model(o));
}

TEST(ModelRun, WeightsFromAFolderAndFromTorchScriptGiveTheSameRun) {
  test::TempDir dir;
  const Yolov5Variant& v = yolov5_variant("yolov5n");
  const Weights w = seeded_weights(v, 0);
  std::filesystem::create_directories(dir.file("weights"));
  for (const auto& [key, t] : w) write_npy(dir.file("weights/" + key + ".npy"), t);
  test::write_torchscript(dir.file("weights.pt"), w);

  RunOptions o;
  o.model = "yolov5n";
  o.img = 64;
  o.postprocess = false;
  o.dump_dir = dir.file("seeded");
  run_model(o);
  for (const std::string& source : {dir.file("weights"), dir.file("weights.pt")}) {
    o.weights = source;
    o.dump_dir = dir.file(source == dir.file("weights") ? "folder" : "torchscript");
    run_model(o);
    const auto a = outputs_of(dir.file("seeded")), b = outputs_of(o.dump_dir);
    ASSERT_EQ(a.size(), b.size());
    for (const auto& [name, t] : a) {
      ASSERT_EQ(t.nbytes(), b.at(name).nbytes()) << name;
      EXPECT_EQ(std::memcmp(t.bytes(), b.at(name).bytes(), t.nbytes()), 0) << source << ": " << name;
    }
  }
  // A missing parameter names its key and file.
  std::filesystem::remove(dir.file("weights/model.3.conv.weight.npy"));
  o.weights = dir.file("weights");
  o.dump_dir.clear();
  try {
    run_model(o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model.3.conv.weight.npy: missing parameter file for model.3.conv.weight"), std::string::npos)
        << e.what();
  }
}

TEST(ModelRun, BadOptionsAreErrors) {
  test::TempDir dir;
  RunOptions o;
  o.model = "yolov5n";
  o.img = 100;
  EXPECT_THROW(run_model(o), Error);  // not a multiple of 32
  o.img = 64;
  o.model = "yolov3";
  EXPECT_THROW(run_model(o), Error);
  o.model = "yolov5n";
  write_npy(dir.file("x.npy"), Tensor(DType::Float32, Shape{1, 3, 32, 32}));
  o.input = dir.file("x.npy");
  EXPECT_THROW(run_model(o), Error);
  o.input.clear();
  o.weights = dir.file("nothing-here.pt");
  EXPECT_THROW(run_model(o), Error);
  test::write_bytes(dir.file("junk.pt"), "not an archive");
  o.weights = dir.file("junk.pt");
  EXPECT_THROW(run_model(o), Error);
}

}  // namespace
}  // namespace parity
