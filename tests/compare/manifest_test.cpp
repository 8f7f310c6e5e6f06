// Hand-written manifests (docs/MANIFEST.md), as another tool writes them: only the required fields
// read, the rest take their defaults; every mistake is refused on opening in one line naming the
// layer and the field; ops parity does not know pair by their fields in any order and are judged
// by values only.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "compare/dump_compare.h"
#include "compare/dump_reader.h"
#include "core/error.h"
#include "core/half.h"
#include "core/npy.h"
#include "core/stats.h"
#include "support/test_support.h"

namespace parity {
namespace {

using nlohmann::json;

Tensor floats(std::vector<float> values, std::vector<int64_t> dims) {
  Tensor t(DType::Float32, Shape(dims));
  for (size_t i = 0; i < values.size(); ++i) t.mutable_data<float>()[i] = values[i];
  return t;
}

Tensor silu_of(const Tensor& x) {
  Tensor y(DType::Float32, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double v = x.data<float>()[i];
    y.mutable_data<float>()[i] = float(v / (1 + std::exp(-v)));
  }
  return y;
}

const Tensor kX = floats({-2, -1, 0, 1, 2, 3}, {2, 3});

// Only the required fields: a known op (silu, with the params it requires) and an op parity does
// not know, fed by the first.
json minimal() {
  return json::parse(R"({"format": "parity-dump", "version": 1, "layers": [
    {"name": "stem", "op": "silu", "params": "silu x=2x3", "inputs": [{"file": "x.npy"}], "outputs": [{"file": "stem.npy"}]},
    {"name": "bn", "op": "torch.batch_norm", "inputs": [{"file": "stem.npy", "source": "stem:out0"}], "outputs": [{"file": "bn.npy"}]}
  ]})");
}

// A dump folder holding `m` and the tensors it names; bn's output is `bn`.
std::string write_dump(const std::string& dir, const json& m, const Tensor& bn) {
  std::filesystem::create_directories(dir);
  write_npy(dir + "/x.npy", kX);
  write_npy(dir + "/stem.npy", silu_of(kX));
  write_npy(dir + "/bn.npy", bn);
  test::write_bytes(dir + "/manifest.json", m.dump());
  return dir;
}

TEST(Manifest, OnlyRequiredFieldsReadWithDefaults) {
  test::TempDir tmp;
  const Dump d = read_dump(write_dump(tmp.file("a"), minimal(), kX));
  EXPECT_EQ(d.model, "");
  EXPECT_EQ(d.seed, 0u);
  EXPECT_TRUE(d.run.empty());
  ASSERT_EQ(d.layers.size(), 2u);
  const DumpLayer &stem = d.layers[0], &bn = d.layers[1];
  EXPECT_EQ(stem.index, 0);
  EXPECT_EQ(bn.index, 1);  // its position
  EXPECT_EQ(stem.params, "silu x=2x3");
  EXPECT_EQ(bn.params, "torch.batch_norm");  // an unknown op's params default to the op
  EXPECT_EQ(bn.time_ms, 0);
  EXPECT_EQ(stem.inputs[0].role, "x");    // a known op's input: the role its line gives it
  EXPECT_EQ(bn.inputs[0].role, "in0");    // an unknown op's: in<k>
  EXPECT_EQ(bn.outputs[0].role, "out0");  // outputs: out<k>
  EXPECT_EQ(stem.inputs[0].dtype, "float32");  // dtype and shape from the .npy header
  EXPECT_EQ(stem.inputs[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(stem.inputs[0].source, "");
  EXPECT_EQ(stem.inputs[0].hash, "");
  EXPECT_FALSE(bn.inputs[0].derived);
  EXPECT_EQ(bn.inputs[0].source_layer, 0);

  const Dump b = read_dump(write_dump(tmp.file("b"), minimal(), kX));
  const CompareResult r = compare_dumps(d, b, CompareOptions{});
  EXPECT_EQ(r.passed, 2);
  EXPECT_EQ(r.failed + r.unchecked + r.structural, 0);
}

// Each case changes the minimal manifest and names the one line read_dump must refuse it with,
// after "<dir>/manifest.json: ".
struct Mistake {
  std::function<void(json&)> change;
  std::string says;
};

void expect_refused(const test::TempDir& tmp, const Mistake& m, const std::string& at) {
  json manifest = minimal();
  m.change(manifest);
  const std::string dir = write_dump(tmp.file("m"), manifest, kX);
  write_npy(dir + "/x64.npy", float_values_as(kX, DType::Float64));
  try {
    read_dump(dir);
    ADD_FAILURE() << at << ": read without error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(m.says), std::string::npos) << at << "\n" << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(Manifest, EveryMistakeNamesTheLayerAndTheField) {
  test::TempDir tmp;
  const std::string m = tmp.file("m/manifest.json: ");
  const std::vector<Mistake> mistakes = {
      {[](json& j) { j["layers"][0].erase("name"); }, m + "layer 0: \"name\": missing (required)"},
      {[](json& j) { j["layers"][1]["op"] = 3; }, m + "layer 1 (bn): \"op\": not a string"},
      {[](json& j) { j["layers"][1]["op"] = "batch norm"; }, m + "layer 1 (bn): \"op\": \"batch norm\" is not one word"},
      {[](json& j) { j["layers"][1].erase("outputs"); }, m + "layer 1 (bn): \"outputs\": missing (required)"},
      {[](json& j) { j["layers"][1]["outputs"] = json::object(); }, m + "layer 1 (bn): \"outputs\": not an array"},
      {[](json& j) { j["layers"][1]["index"] = 1.5; }, m + "layer 1 (bn): \"index\": not an integer"},
      {[](json& j) { j["layers"][1]["time_ms"] = "fast"; }, m + "layer 1 (bn): \"time_ms\": not a number"},
      {[](json& j) { j["layers"][1]["inputs"][0]["shape"] = "2x3"; }, m + "layer 1 (bn): inputs[0] \"shape\": not an array"},
      {[](json& j) { j["layers"][1]["inputs"][0]["shape"] = {2, -3}; }, m + "layer 1 (bn): inputs[0] \"shape\": "},
      {[](json& j) { j["layers"][1]["inputs"][0]["shape"] = {2, 4}; },
       m + "layer 1 (bn): inputs[0]: stem.npy holds float32 2x3, the manifest says float32 2x4"},
      {[](json& j) { j["layers"][1]["inputs"][0]["dtype"] = "float33"; }, m + "layer 1 (bn): inputs[0] \"dtype\": unknown dtype \"float33\""},
      {[](json& j) { j["layers"][1]["inputs"][0].erase("file"); }, m + "layer 1 (bn): inputs[0] \"file\": missing (required)"},
      {[](json& j) { j["layers"][1]["inputs"][0]["file"] = "../x.npy"; }, "is not a plain file name in the dump folder"},
      {[](json& j) { j["layers"][1]["inputs"][0]["file"] = "gone.npy"; },
       "gone.npy: layer 1 (bn): inputs[0] \"file\": the manifest lists a missing file"},
      {[](json& j) { j["layers"][1]["inputs"][0]["source"] = "stem"; }, m + "layer 1 (bn): inputs[0] \"source\": \"stem\" is not \"<layer>:<role>\""},
      {[](json& j) { j["layers"][1]["inputs"][0]["source"] = 7; }, m + "layer 1 (bn): inputs[0] \"source\": not a string"},
      {[](json& j) { j["layers"][1]["inputs"][0]["derived"] = "yes"; }, m + "layer 1 (bn): inputs[0] \"derived\": not a boolean"},
      {[](json& j) { j["layers"][1]["inputs"][0]["sorce"] = "stem:out0"; }, m + "layer 1 (bn): inputs[0] \"sorce\": unknown field (known: "},
      {[](json& j) { j["layers"][1]["outputs"][0]["hash"] = "abc"; }, m + "layer 1 (bn): outputs[0] \"hash\": malformed \"abc\""},
      {[](json& j) { j["layers"][1]["outputs"][0]["role"] = ""; }, m + "layer 1 (bn): outputs[0] \"role\": empty"},
      {[](json& j) { j["layers"][1]["outputs"].push_back({{"file", "x.npy"}, {"role", "out0"}}); },
       m + "layer 1 (bn): outputs[1] \"role\": \"out0\" is listed twice"},
      {[](json& j) { j["layers"][1]["outputs"][0] = "bn.npy"; }, m + "layer 1 (bn): outputs[0]: not an object"},
      {[](json& j) { j["layers"][1]["parmas"] = "x"; }, m + "layer 1 (bn): \"parmas\": unknown field"},
      {[](json& j) { j["seed"] = -1; }, m + "\"seed\": not an unsigned integer"},
      {[](json& j) { j["layers"][1] = 5; }, m + "layer 1: not an object"},
      // A known op: params required and parsed, its op the params' first word.
      {[](json& j) { j["layers"][0].erase("params"); }, m + "layer 0 (stem): \"params\": missing (required for silu, an op parity knows)"},
      {[](json& j) { j["layers"][0]["params"] = ""; }, m + "layer 0 (stem): \"params\": empty"},
      {[](json& j) { j["layers"][0]["params"] = "sigmoid x=2x3"; },
       m + "layer 0 (stem): \"params\": starts with \"sigmoid\", the op is \"silu\""},
      {[](json& j) { j["layers"][1]["params"] = "torch.relu in0=2x3"; },
       m + "layer 1 (bn): \"params\": starts with \"torch.relu\", the op is \"torch.batch_norm\""},
      {[](json& j) { j["layers"][0]["params"] = "silu x=2x3 slope=2"; }, m + "layer 0 (stem): \"params\": silu"},
      // A known op's inputs are the ones its line names: count, role, dtype, shape.
      {[](json& j) { j["layers"][0]["inputs"].push_back({{"file", "x.npy"}}); },
       m + "layer 0 (stem): \"inputs\": 2 listed, the op line names 1 (x)"},
      {[](json& j) { j["layers"][0]["inputs"][0]["role"] = "input"; },
       m + "layer 0 (stem): inputs[0] \"role\": \"input\", the op line's input 0 is \"x\""},
      {[](json& j) { j["layers"][0]["params"] = "silu x=2x4"; }, m + "layer 0 (stem): inputs[0] (x) \"shape\": 2x3, the op line says 2x4"},
      {[](json& j) { j["layers"][0]["inputs"][0]["file"] = "x64.npy"; },
       m + "layer 0 (stem): inputs[0] (x) \"dtype\": float64, the op line says float32"},
  };
  for (size_t i = 0; i < mistakes.size(); ++i) expect_refused(tmp, mistakes[i], "mistake " + std::to_string(i));
}

// The judge widens float16 inputs to float32, so a half-precision run's inputs fit a float32 line.
TEST(Manifest, Float16InputsFitAFloat32Line) {
  test::TempDir tmp;
  const std::string dir = write_dump(tmp.file("h"), minimal(), kX);
  Tensor half(DType::Float16, kX.shape());
  for (int64_t i = 0; i < kX.numel(); ++i) half.mutable_data<Half>()[i] = float_to_half(kX.data<float>()[i]);
  write_npy(dir + "/x.npy", half);
  const Dump d = read_dump(dir);
  EXPECT_EQ(d.layers[0].inputs[0].dtype, "float16");
}

// parse_manifest alone opens no file: every tensor must then list its dtype and shape.
TEST(Manifest, WithoutFilesDtypeAndShapeAreRequired) {
  try {
    parse_manifest(minimal().dump(), "x/manifest.json");
    ADD_FAILURE() << "read without dtype";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "x/manifest.json: layer 0 (stem): inputs[0] \"dtype\": missing, and no file is read here to take it from");
  }
}

json with_bn_params(const std::string& params) {
  json m = minimal();
  m["layers"][1]["params"] = params;
  return m;
}

// An unknown op's line is its op and a set of fields: order and spacing are the writer's choice.
TEST(Manifest, UnknownOpFieldsInAnyOrderAreTheSameCall) {
  test::TempDir tmp;
  const Dump a = read_dump(write_dump(tmp.file("a"), with_bn_params("torch.batch_norm in0=2x3 eps=1e-05 momentum=0.1"), kX));
  const Dump b = read_dump(write_dump(tmp.file("b"), with_bn_params("torch.batch_norm   momentum=0.1\teps=1e-05  in0=2x3"), kX));
  CompareResult r = compare_dumps(a, b, CompareOptions{});
  ASSERT_EQ(r.layers.size(), 2u);
  EXPECT_EQ(r.layers[1].state, State::Passed) << r.layers[1].note();
  EXPECT_FALSE(r.layers[1].structural);
  EXPECT_EQ(r.layers[1].params_b, "");

  const Dump c = read_dump(write_dump(tmp.file("c"), with_bn_params("torch.batch_norm in0=2x3 eps=1e-03 momentum=0.1"), kX));
  r = compare_dumps(a, c, CompareOptions{});
  EXPECT_EQ(r.layers[1].state, State::Failed);
  EXPECT_TRUE(r.layers[1].structural);
  EXPECT_NE(r.layers[1].reason.find("B ran another call"), std::string::npos) << r.layers[1].reason;
}

// No local check for an op the judge lacks: beyond tolerance it is UNCHECKED, never an origin;
// within tolerance it passes.
TEST(Manifest, UnknownOpIsJudgedByValuesOnly) {
  test::TempDir tmp;
  const Dump a = read_dump(write_dump(tmp.file("a"), minimal(), kX));
  Tensor close = kX.clone(), distant = kX.clone();
  close.mutable_data<float>()[5] += 1e-6f;
  distant.mutable_data<float>()[5] += 1e-2f;
  CompareResult r = compare_dumps(a, read_dump(write_dump(tmp.file("close"), minimal(), close)), CompareOptions{});
  EXPECT_EQ(r.layers[1].state, State::Passed) << r.layers[1].note();
  r = compare_dumps(a, read_dump(write_dump(tmp.file("distant"), minimal(), distant)), CompareOptions{});
  EXPECT_EQ(r.layers[1].state, State::Unchecked);
  EXPECT_FALSE(r.layers[1].origin);
  EXPECT_EQ(r.origin, -1);
  EXPECT_NE(r.layers[1].reason.find("the judge (ref) has no torch.batch_norm"), std::string::npos) << r.layers[1].reason;
}

}  // namespace
}  // namespace parity
