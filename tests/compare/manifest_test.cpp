// Hand-written manifests (docs/MANIFEST.md), as another tool writes them: only the required fields
// read, the rest take their defaults; every mistake is refused on opening in one line naming the
// layer and the field; ops parity does not know pair by their fields in any order and are judged
// by values only.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <random>
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
  EXPECT_FALSE(d.seed.has_value());  // none recorded: reports say "seed not recorded"
  EXPECT_TRUE(d.run.empty());
  ASSERT_EQ(d.layers.size(), 2u);
  const DumpLayer &stem = d.layers[0], &bn = d.layers[1];
  EXPECT_EQ(stem.index, 0);
  EXPECT_EQ(bn.index, 1);  // its position
  EXPECT_EQ(stem.line, "silu x=2x3");
  EXPECT_EQ(bn.line, "torch.batch_norm");  // an unknown op's params default to the op
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
  EXPECT_TRUE(r.layers[1].passed()) << r.layers[1].note();
  EXPECT_FALSE(r.layers[1].structural());
  EXPECT_EQ(r.layers[1].line_b, "");

  const Dump c = read_dump(write_dump(tmp.file("c"), with_bn_params("torch.batch_norm in0=2x3 eps=1e-03 momentum=0.1"), kX));
  r = compare_dumps(a, c, CompareOptions{});
  EXPECT_EQ(r.layers[1].state, RowState::Structural);
  EXPECT_TRUE(r.layers[1].structural());
  EXPECT_NE(r.layers[1].reason.find("B ran another call"), std::string::npos) << r.layers[1].reason;
}

// A CPU run against a CUDA run, or a float64 run against a float32 one (both written as float32):
// the fields that place tensors (device, as a keyword or a positional `.to` argument, pinning,
// layout, autograd) and which floating dtype a call names are not the call. What the call
// computes still is: another argument, or a floating dtype against an integer one.
TEST(Manifest, CallsDifferingOnlyInDeviceOrFloatingDtypeAreTheSameCall) {
  test::TempDir tmp;
  int n = 0;
  auto layer_with = [](const std::string& line) {
    json m = with_bn_params(line);
    m["layers"][1]["op"] = line.substr(0, line.find(' '));
    return m;
  };
  auto state_of = [&](const std::string& line_a, const std::string& line_b) {
    const std::string da = tmp.file("a" + std::to_string(n)), db = tmp.file("b" + std::to_string(n++));
    const CompareResult r = compare_dumps(read_dump(write_dump(da, layer_with(line_a), kX)),
                                          read_dump(write_dump(db, layer_with(line_b), kX)), CompareOptions{});
    return std::make_tuple(r.layers.at(1).state, r.layers.at(1).structural(), r.layers.at(1).line_b);
  };
  const std::vector<std::pair<std::string, std::string>> same = {
      {"torch.arange arg0=80 device=device(type='cpu') dtype=torch.float64", "torch.arange arg0=80 device=device(type='cuda',index=0) dtype=torch.float32"},
      {"torch.Tensor.to in0=2x3 arg1='cuda:0' non_blocking=True", "torch.Tensor.to in0=2x3"},
      {"torch.Tensor.to in0=2x3 arg1=device(type='cuda',index=0)", "torch.Tensor.to in0=2x3 arg1=device(type='cpu')"},
      {"torch.zeros arg0=(2,3) pin_memory=True layout=torch.strided requires_grad=False", "torch.zeros arg0=(2,3) memory_format=torch.contiguous_format"},
      {"torch.full arg0=(2,3) arg1=0.5 dtype=torch.half", "torch.full arg0=(2,3) arg1=0.5 dtype=torch.bfloat16"}};
  for (const auto& [a, b] : same) {
    EXPECT_EQ(state_of(a, b), std::make_tuple(RowState::Passed, false, std::string())) << a << " | " << b;
  }
  const std::vector<std::pair<std::string, std::string>> different = {
      {"torch.arange arg0=80 device=device(type='cpu')", "torch.arange arg0=40 device=device(type='cuda',index=0)"},
      {"torch.arange arg0=80 dtype=torch.float32", "torch.arange arg0=80 dtype=torch.int64"},
      {"torch.Tensor.to in0=2x3 arg1=torch.float16", "torch.Tensor.to in0=2x3 arg1=torch.int32"}};
  for (const auto& [a, b] : different) {
    const auto [state, structural, params_b] = state_of(a, b);
    EXPECT_EQ(state, RowState::Structural) << a << " | " << b;
    EXPECT_TRUE(structural) << a << " | " << b;
    EXPECT_EQ(params_b, b);
  }
}

// A half-precision run takes the image (and the weights) rounded to float16. Under --precision
// fp16 that input, which no layer produced, is what the precision does: the layer passes on its
// own inputs, and the header says so. Under fp32 it is the origin; and under fp16 an input that
// is not the other's value rounded (noise of the same size) still is.
TEST(Manifest, GivenInputRoundedToTheRunsPrecisionIsExpectedNotAnOrigin) {
  test::TempDir tmp;
  const Tensor x = floats({-2.7182817f, -1.0f / 3, 0.1f, 1.4142135f, 2.3025851f, 3.1415927f}, {2, 3});
  Tensor rounded = x.clone(), noisy = x.clone();
  for (int64_t i = 0; i < x.numel(); ++i) {
    rounded.mutable_data<float>()[i] = half_to_float(float_to_half(x.data<float>()[i]));
    noisy.mutable_data<float>()[i] = x.data<float>()[i] * (1 + 3e-4f * float(i % 2 ? 1 : -1));
  }
  const json m = json::parse(R"({"format": "parity-dump", "version": 1, "layers": [
    {"name": "stem", "op": "silu", "params": "silu x=2x3", "inputs": [{"file": "x.npy"}], "outputs": [{"file": "stem.npy"}]}]})");
  auto dump_of = [&](const std::string& name, const Tensor& in) {
    const std::string dir = tmp.file(name);
    std::filesystem::create_directories(dir);
    write_npy(dir + "/x.npy", in);
    write_npy(dir + "/stem.npy", silu_of(in));
    test::write_bytes(dir + "/manifest.json", m.dump());
    return read_dump(dir);
  };
  const Dump a = dump_of("fp32", x), b = dump_of("fp16", rounded), c = dump_of("noisy", noisy);
  CompareOptions fp16;
  fp16.judge.precision = Precision::Fp16;
  for (const auto& [first, second] : {std::pair{&a, &b}, std::pair{&b, &a}}) {
    const CompareResult r = compare_dumps(*first, *second, fp16);
    EXPECT_EQ(r.origin, -1) << r.layers[0].reason;
    EXPECT_TRUE(r.layers[0].passed()) << r.layers[0].reason;
    ASSERT_EQ(r.expected.size(), 1u);
    EXPECT_NE(r.expected[0].find("1 input no layer produced"), std::string::npos) << r.expected[0];
    EXPECT_NE(r.expected[0].find("rounded to fp16"), std::string::npos) << r.expected[0];
    EXPECT_NE(r.expected[0].find("stem x"), std::string::npos) << r.expected[0];
  }
  const CompareResult fp32 = compare_dumps(a, b, CompareOptions{});
  EXPECT_EQ(fp32.origin, 0);
  EXPECT_NE(fp32.layers[0].reason.find("input x differs and no layer produced it"), std::string::npos) << fp32.layers[0].reason;
  EXPECT_TRUE(fp32.expected.empty());
  const CompareResult noise = compare_dumps(a, c, fp16);
  EXPECT_EQ(noise.origin, 0);
  EXPECT_NE(noise.layers[0].reason.find("input x differs and no layer produced it"), std::string::npos) << noise.layers[0].reason;
}

// The same, when the half-precision run casts the image inside the dumped block: the cast is a
// layer of that run only. Under --precision fp16 it is the run's precision (explained, said once
// in the header), the layer after it passes on its own inputs, and the image it cast is still
// compared with the other run's: a different image is the origin. Under fp32 the cast is a
// structural difference.
TEST(Manifest, CastToTheRunsPrecisionOnOneSideIsNotStructural) {
  test::TempDir tmp;
  const Tensor x = floats({-2.7182817f, -1.0f / 3, 0.1f, 1.4142135f, 2.3025851f, 3.1415927f}, {2, 3});
  Tensor other = x.clone();
  other.mutable_data<float>()[4] += 0.25f;
  auto rounded = [](const Tensor& t) {
    Tensor r = t.clone();
    for (int64_t i = 0; i < t.numel(); ++i) r.mutable_data<float>()[i] = half_to_float(float_to_half(t.data<float>()[i]));
    return r;
  };
  auto write = [&](const std::string& name, const json& m, const Tensor& image, const Tensor& stem_in) {
    const std::string dir = tmp.file(name);
    std::filesystem::create_directories(dir);
    write_npy(dir + "/x.npy", image);
    write_npy(dir + "/xh.npy", rounded(image));
    write_npy(dir + "/stem.npy", silu_of(stem_in));
    test::write_bytes(dir + "/manifest.json", m.dump());
    return read_dump(dir);
  };
  const json plain = json::parse(R"({"format": "parity-dump", "version": 1, "layers": [
    {"name": "stem", "op": "silu", "params": "silu x=2x3", "inputs": [{"file": "x.npy"}], "outputs": [{"file": "stem.npy"}]}]})");
  const json cast = json::parse(R"({"format": "parity-dump", "version": 1, "layers": [
    {"name": "half", "op": "torch.Tensor.half", "params": "torch.Tensor.half in0=2x3", "inputs": [{"file": "x.npy"}], "outputs": [{"file": "xh.npy"}]},
    {"name": "stem", "op": "silu", "params": "silu x=2x3", "inputs": [{"file": "xh.npy", "source": "half:out0"}], "outputs": [{"file": "stem.npy"}]}]})");
  const Dump a = write("fp32", plain, x, x), b = write("fp16", cast, x, rounded(x)), c = write("other", cast, other, rounded(other));
  CompareOptions fp16;
  fp16.judge.precision = Precision::Fp16;
  for (const auto& [first, second] : {std::pair{&a, &b}, std::pair{&b, &a}}) {
    const CompareResult r = compare_dumps(*first, *second, fp16);
    ASSERT_EQ(r.layers.size(), 2u);
    EXPECT_EQ(r.origin, -1) << r.layers[0].reason << " | " << r.layers[1].reason;
    EXPECT_EQ(r.structural, 0);
    for (const LayerReport& l : r.layers) EXPECT_TRUE(l.passed()) << l.name << ": " << l.reason;
    ASSERT_EQ(r.expected.size(), 1u);
    EXPECT_NE(r.expected[0].find("1 cast on one side only, to the precision of its run (fp16): half"), std::string::npos) << r.expected[0];
  }
  const CompareResult fp32 = compare_dumps(a, b, CompareOptions{});
  EXPECT_GE(fp32.structural, 1);
  EXPECT_NE(fp32.origin, -1);
  const CompareResult different = compare_dumps(a, c, fp16);
  ASSERT_GE(different.origin, 0);
  EXPECT_EQ(different.layers[size_t(different.origin)].name, "stem");
  EXPECT_NE(different.layers[size_t(different.origin)].reason.find("input x differs and no layer produced it"), std::string::npos)
      << different.layers[size_t(different.origin)].reason;
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
  EXPECT_TRUE(r.layers[1].passed()) << r.layers[1].note();
  r = compare_dumps(a, read_dump(write_dump(tmp.file("distant"), minimal(), distant)), CompareOptions{});
  EXPECT_EQ(r.layers[1].state, RowState::Unchecked);
  EXPECT_FALSE(r.layers[1].origin());
  EXPECT_EQ(r.origin, -1);
  EXPECT_NE(r.layers[1].reason.find("the judge (ref) has no torch.batch_norm"), std::string::npos) << r.layers[1].reason;
}

// A call parity has no op for, recorded as parity_torch records it, is run again in float64 by
// LibTorch on each side's own inputs (kernels/aten/torch_calls.cpp): x * 2, 1 - x (a reflected
// operator), x ** 2. Two sides whose inputs differ (as after any float32 against float64 layer)
// each match it: PASSED, explained. A side whose output is off is the origin, on that side. A call
// LibTorch is not given to run again stays judged by values only, saying why.
TEST(Manifest, TorchCallsAreRunAgainInFloat64) {
  test::TempDir tmp;
  const Tensor x = floats({-2.7182817f, -1.0f / 3, 0.1f, 1.4142135f, 2.3025851f, 3.1415927f}, {2, 3});
  Tensor x2 = x.clone();
  for (int64_t i = 0; i < x.numel(); ++i) x2.mutable_data<float>()[i] *= 1 + 1e-4f;  // upstream rounding, magnified
  struct Case {
    std::string line;
    double (*f)(double);
  };
  const std::vector<Case> cases = {{"torch.Tensor.mul in0=2x3 arg1=2", [](double v) { return v * 2; }},
                                   {"torch.Tensor.__rsub__ in0=2x3 arg1=1", [](double v) { return 1 - v; }},
                                   {"torch.Tensor.__pow__ in0=2x3 arg1=2", [](double v) { return v * v; }},
                                   {"torch.sigmoid in0=2x3", [](double v) { return 1 / (1 + std::exp(-v)); }}};
  int n = 0;
  auto dump_of = [&](const Case& c, const Tensor& in, float bump) {
    Tensor out(DType::Float32, in.shape());
    for (int64_t i = 0; i < in.numel(); ++i) out.mutable_data<float>()[i] = float(c.f(in.data<float>()[i]));
    out.mutable_data<float>()[4] += bump;
    const std::string dir = tmp.file("d" + std::to_string(n++));
    std::filesystem::create_directories(dir);
    write_npy(dir + "/x.npy", in);
    write_npy(dir + "/y.npy", out);
    json m = json::parse(R"({"format": "parity-dump", "version": 1, "layers": [
      {"name": "f", "op": "", "params": "", "inputs": [{"role": "in0", "file": "x.npy"}], "outputs": [{"file": "y.npy"}]}]})");
    m["layers"][0]["op"] = c.line.substr(0, c.line.find(' '));
    m["layers"][0]["params"] = c.line;
    test::write_bytes(dir + "/manifest.json", m.dump());
    return read_dump(dir);
  };
  for (const Case& c : cases) {
    // Each side matches the float64 run on its own inputs (the given inputs differ, which is the
    // layer's own finding; the local checks are what this is about).
    const CompareResult clean = compare_dumps(dump_of(c, x, 0), dump_of(c, x2, 0), CompareOptions{});
    ASSERT_EQ(clean.layers.size(), 1u);
    const LayerReport& l = clean.layers[0];
    EXPECT_TRUE(l.verdict.a.ran && l.verdict.a.ok && l.verdict.b.ran && l.verdict.b.ok) << c.line << ": " << l.reason;
    for (const auto& [bad_a, side] : {std::pair{true, Sides::A}, std::pair{false, Sides::B}}) {
      const CompareResult r = compare_dumps(dump_of(c, x, bad_a ? 0.01f : 0), dump_of(c, x, bad_a ? 0 : 0.01f), CompareOptions{});
      EXPECT_EQ(r.layers[0].state, RowState::Origin) << c.line << ": " << r.layers[0].reason;
      EXPECT_EQ(r.layers[0].defective, side) << c.line << ": " << r.layers[0].reason;
      EXPECT_NE(r.layers[0].reason.find("LibTorch in float64"), std::string::npos) << r.layers[0].reason;
    }
  }
  // Python's repr of a number operand: nan and inf are numbers too (x * nan is NaN, not x * 0).
  // A, which wrote what the call gives, matches the judge; B, which wrote 0.5, does not.
  for (const auto& [line, f] : std::vector<std::pair<std::string, double (*)(double)>>{
           {"torch.Tensor.mul in0=2x3 arg1=nan", [](double v) { return v * std::nan(""); }},
           {"torch.Tensor.mul in0=2x3 arg1=-inf", [](double v) { return v * -HUGE_VAL; }}}) {
    const CompareResult r = compare_dumps(dump_of({line, f}, x, 0), dump_of({line, [](double) { return 0.5; }}, x, 0), CompareOptions{});
    EXPECT_EQ(r.layers.at(0).state, RowState::Origin) << line << ": " << r.layers[0].reason;
    EXPECT_EQ(r.layers[0].defective, Sides::B) << line << ": " << r.layers[0].reason;
  }
  const Case unsupported = {"torch.inverse in0=2x3", [](double v) { return v; }};
  const CompareResult r = compare_dumps(dump_of(unsupported, x, 0), dump_of(unsupported, x, 0.01f), CompareOptions{});
  EXPECT_EQ(r.layers[0].state, RowState::Unchecked) << r.layers[0].reason;
  EXPECT_NE(r.layers[0].reason.find("LibTorch cannot run it again here: parity cannot run torch.inverse again"), std::string::npos)
      << r.layers[0].reason;
}

// Any other call LibTorch has an operator for is run again through its dispatcher, where a bound
// on a correct result is known (kernels/aten/torch_dispatch.cpp). linear sums 1000 positive
// products (about 250): two correct float32 results summed in opposite orders differ beyond the
// default tolerance, and each is within the bound (K + 2) 2^-24 S, about 0.015 here; one element
// off by 0.1 is not, on its side. An index
// (a slice key, and an assignment through one) is exact. A call with no known bound is refused.
TEST(Manifest, AtenOperatorsAreRunAgainWithTheirBounds) {
  test::TempDir tmp;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  auto random = [&](std::vector<int64_t> dims) {
    Tensor t(DType::Float32, Shape(dims));
    for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = u(rng);
    return t;
  };
  int n = 0;
  // A dump of one layer: `line`, its inputs in0.. and its one output.
  auto dump_of = [&](const std::string& line, const std::vector<std::pair<std::string, Tensor>>& inputs, const Tensor& out) {
    const std::string dir = tmp.file("aten" + std::to_string(n++));
    std::filesystem::create_directories(dir);
    json layer = {{"name", "f"}, {"op", line.substr(0, line.find(' '))}, {"params", line}, {"outputs", {{{"file", "y.npy"}}}}};
    for (const auto& [role, t] : inputs) {
      write_npy(dir + "/" + role + ".npy", t);
      layer["inputs"].push_back({{"role", role}, {"file", role + ".npy"}});
    }
    write_npy(dir + "/y.npy", out);
    test::write_bytes(dir + "/manifest.json", json{{"format", "parity-dump"}, {"version", 1}, {"layers", {layer}}}.dump());
    return read_dump(dir);
  };
  const int64_t K = 1000;
  std::uniform_real_distribution<float> positive(0, 1);
  auto positives = [&](std::vector<int64_t> dims) {
    Tensor t(DType::Float32, Shape(dims));
    for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = positive(rng);
    return t;
  };
  const Tensor x = positives({4, K}), w = positives({5, K}), b = random({5});
  auto linear = [&](bool reversed) {
    Tensor y(DType::Float32, Shape({4, 5}));
    for (int64_t i = 0; i < 4; ++i) {
      for (int64_t o = 0; o < 5; ++o) {
        float acc = b.data<float>()[o];
        for (int64_t k = 0; k < K; ++k) {
          const int64_t kk = reversed ? K - 1 - k : k;
          acc += x.data<float>()[i * K + kk] * w.data<float>()[o * K + kk];
        }
        y.mutable_data<float>()[i * 5 + o] = acc;
      }
    }
    return y;
  };
  const std::string line = "torch.nn.functional.linear in0=4x1000 in1=5x1000 in2=5";
  const std::vector<std::pair<std::string, Tensor>> in = {{"in0", x}, {"in1", w}, {"in2", b}};
  const Tensor forward = linear(false), backward = linear(true);
  const CompareResult clean = compare_dumps(dump_of(line, in, forward), dump_of(line, in, backward), CompareOptions{});
  ASSERT_EQ(clean.layers.size(), 1u);
  EXPECT_TRUE(clean.layers[0].verdict.differs) << "the two orders must differ beyond tolerance for this to test the bound";
  EXPECT_TRUE(clean.layers[0].passed()) << clean.layers[0].reason;
  EXPECT_TRUE(clean.layers[0].verdict.a.ran && clean.layers[0].verdict.a.ok && clean.layers[0].verdict.b.ok) << clean.layers[0].reason;
  Tensor off = backward.clone();
  off.mutable_data<float>()[7] += 0.1f;
  const CompareResult bad = compare_dumps(dump_of(line, in, forward), dump_of(line, in, off), CompareOptions{});
  EXPECT_EQ(bad.layers[0].state, RowState::Origin) << bad.layers[0].reason;
  EXPECT_EQ(bad.layers[0].defective, Sides::B) << bad.layers[0].reason;

  // x[:, 1:3] and x[:, 1:3] = v, as parity_torch records them; each side's output its own answer
  // or one element off.
  const Tensor m = random({3, 4}), v = random({3, 2});
  Tensor got(DType::Float32, Shape({3, 2})), set = m.clone();
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 2; ++j) {
      got.mutable_data<float>()[i * 2 + j] = m.data<float>()[i * 4 + 1 + j];
      set.mutable_data<float>()[i * 4 + 1 + j] = v.data<float>()[i * 2 + j];
    }
  }
  struct Index {
    std::string line;
    std::vector<std::pair<std::string, Tensor>> in;
    Tensor out;
  };
  for (const Index& c : {Index{"torch.Tensor.__getitem__ in0=3x4 arg1=(slice(None,None,None),slice(1,3,None))", {{"in0", m}}, got},
                         Index{"torch.Tensor.__setitem__ in0=3x4 in2=3x2 arg1=(slice(None,None,None),slice(1,3,None))", {{"in0", m}, {"in2", v}}, set}}) {
    Tensor wrong = c.out.clone();
    wrong.mutable_data<float>()[1] += 0.5f;
    const CompareResult r = compare_dumps(dump_of(c.line, c.in, c.out), dump_of(c.line, c.in, wrong), CompareOptions{});
    EXPECT_EQ(r.layers[0].state, RowState::Origin) << c.line << ": " << r.layers[0].reason;
    EXPECT_EQ(r.layers[0].defective, Sides::B) << c.line << ": " << r.layers[0].reason;
  }
  // sort: B orders the tied 2s otherwise than the judge, as correctly; C picks one 2 twice.
  const Tensor unsorted = floats({1, 2, 2, 3}, {4}), sorted = floats({3, 2, 2, 1}, {4});
  auto indices = [](std::vector<int64_t> i) {
    Tensor t(DType::Int64, Shape({4}));
    for (size_t k = 0; k < 4; ++k) t.mutable_data<int64_t>()[k] = i[k];
    return t;
  };
  const auto sort_dump = [&](const Tensor& idx) {
    const std::string dir = tmp.file("sort" + std::to_string(n++));
    std::filesystem::create_directories(dir);
    write_npy(dir + "/x.npy", unsorted);
    write_npy(dir + "/v.npy", sorted);
    write_npy(dir + "/i.npy", idx);
    test::write_bytes(dir + "/manifest.json", json::parse(R"({"format": "parity-dump", "version": 1, "layers": [
      {"name": "sort", "op": "torch.Tensor.sort", "params": "torch.Tensor.sort in0=4 descending=True",
       "inputs": [{"role": "in0", "file": "x.npy"}], "outputs": [{"file": "v.npy"}, {"file": "i.npy"}]}]})").dump());
    return read_dump(dir);
  };
  const Dump judge_order = sort_dump(indices({3, 1, 2, 0})), ties_swapped = sort_dump(indices({3, 2, 1, 0})), twice = sort_dump(indices({3, 1, 1, 0}));
  EXPECT_TRUE(compare_dumps(judge_order, ties_swapped, CompareOptions{}).layers.at(0).passed());
  const CompareResult repeated = compare_dumps(judge_order, twice, CompareOptions{});
  EXPECT_EQ(repeated.layers.at(0).state, RowState::Origin) << repeated.layers[0].reason;
  EXPECT_EQ(repeated.layers[0].defective, Sides::B) << repeated.layers[0].reason;
  EXPECT_NE(repeated.layers[0].reason.find("an index appears twice"), std::string::npos) << repeated.layers[0].reason;

  const CompareResult refused =
      compare_dumps(dump_of("torch.inverse in0=3x4", {{"in0", m}}, m), dump_of("torch.inverse in0=3x4", {{"in0", m}}, got), CompareOptions{});
  EXPECT_NE(refused.layers[0].reason.find("no error bound for it is known here"), std::string::npos) << refused.layers[0].reason;
}

}  // namespace
}  // namespace parity
