// Dumps written by another tool, with an op parity does not know (here torch.batch_norm): compare
// and bisect judge it by values only, through every report and `bisect --rerun`, and a mistake in
// a manifest is refused on opening with one line naming the layer and the field.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/npy.h"
#include "support/test_support.h"

namespace parity {
namespace {

using test::run_parity;

Tensor values(float shift) {
  Tensor t(DType::Float32, Shape{2, 3});
  for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = float(i) - 2.5f + (i == 5 ? shift : 0.f);
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

// x -> stem (silu) -> bn (torch.batch_norm, with a weight no layer produced) -> head (silu).
// `bn_shift` moves one element of bn's output, `weight_shift` one of its weight; head is the
// silu of whatever bn gave, so it is correct on its own inputs either way.
std::string hand_dump(const test::TempDir& tmp, const std::string& name, float bn_shift, float weight_shift) {
  const std::string dir = tmp.file(name);
  std::filesystem::create_directories(dir);
  const Tensor x = values(0), bn = values(bn_shift);
  write_npy(dir + "/x.npy", x);
  write_npy(dir + "/stem.npy", silu_of(x));
  write_npy(dir + "/w.npy", values(weight_shift));
  write_npy(dir + "/bn.npy", bn);
  write_npy(dir + "/head.npy", silu_of(bn));
  test::write_bytes(dir + "/manifest.json", R"({"format": "parity-dump", "version": 1, "model": "hand", "layers": [
    {"name": "stem", "op": "silu", "params": "silu x=2x3", "inputs": [{"file": "x.npy"}], "outputs": [{"file": "stem.npy"}]},
    {"name": "bn", "op": "torch.batch_norm", "params": "torch.batch_norm in0=2x3 eps=1e-05 momentum=0.1",
     "inputs": [{"file": "stem.npy", "source": "stem:out0"}, {"role": "weight", "file": "w.npy"}], "outputs": [{"file": "bn.npy"}]},
    {"name": "head", "op": "silu", "params": "silu x=2x3", "inputs": [{"file": "bn.npy", "source": "bn:out0"}],
     "outputs": [{"file": "head.npy"}]}]})");
  return dir;
}

std::string state_of(const nlohmann::json& report, const std::string& layer) {
  for (const auto& l : report["layers"]) {
    if (l["name"] == layer) return l["state"];
  }
  return "(no row)";
}

TEST(HandWrittenDump, UnknownOpWithinToleranceOfTheOtherSidePasses) {
  test::TempDir tmp;
  const std::string a = hand_dump(tmp, "a", 0, 0), b = hand_dump(tmp, "b", 1e-6f, 0);
  auto r = run_parity({"compare", a, b, "--json", tmp.file("r.json"), "--csv", tmp.file("r.csv"), "--html", tmp.file("r.html")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(state_of(nlohmann::json::parse(test::read_text(tmp.file("r.json"))), "bn"), "PASSED");
  r = run_parity({"bisect", a, b, "--rerun", "aten"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("no divergence"), std::string::npos) << r.out;
}

TEST(HandWrittenDump, UnknownOpBeyondToleranceIsUncheckedInEveryReport) {
  test::TempDir tmp;
  const std::string a = hand_dump(tmp, "a", 0, 0), b = hand_dump(tmp, "b", 1e-2f, 0);
  auto r = run_parity({"compare", a, b, "--json", tmp.file("r.json"), "--csv", tmp.file("r.csv"), "--html", tmp.file("r.html")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("the judge (ref) has no torch.batch_norm"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(test::read_text(tmp.file("r.json")));
  EXPECT_EQ(state_of(j, "bn"), "UNCHECKED");
  EXPECT_EQ(state_of(j, "head"), "PASSED");  // explained: silu of what bn gave, on both sides
  EXPECT_TRUE(j["origin"].is_null());
  EXPECT_NE(test::read_text(tmp.file("r.csv")).find(",UNCHECKED,"), std::string::npos);
  EXPECT_NE(test::read_text(tmp.file("r.html")).find("torch.batch_norm"), std::string::npos);
  r = run_parity({"bisect", a, b, "--rerun", "aten", "--json", tmp.file("b.json"), "--html", tmp.file("b.html")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("no confident origin: first unexplained difference at bn (layer 1, torch.batch_norm): UNCHECKED", 0), 0u) << r.out;
}

// A weight no layer produced that differs makes the unknown op's layer an origin (the data, not a
// kernel): --rerun has nothing to run there and says so.
TEST(HandWrittenDump, UnknownOpOriginIsNotRerun) {
  test::TempDir tmp;
  const std::string a = hand_dump(tmp, "a", 0, 0), b = hand_dump(tmp, "b", 1e-2f, 1);
  const auto r = run_parity({"bisect", a, b, "--rerun", "aten"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("origin: bn (layer 1, torch.batch_norm)\n  defective: neither kernel", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("input weight differs and no layer produced it"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rerun of bn on aten with A's inputs: not possible, aten has no torch.batch_norm"), std::string::npos) << r.out;
}

TEST(HandWrittenDump, MistakeIsOneLineNamingLayerAndField) {
  test::TempDir tmp;
  const std::string a = hand_dump(tmp, "a", 0, 0), b = hand_dump(tmp, "b", 0, 0);
  std::string m = test::read_text(b + "/manifest.json");
  m.replace(m.find("\"role\": \"weight\", "), 18, "\"role\": \"weight\", \"shape\": \"2x3\", ");
  test::write_bytes(b + "/manifest.json", m);
  const auto r = run_parity({"compare", a, b});
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_EQ(r.err, "parity compare: " + b + "/manifest.json: layer 1 (bn): inputs[1] \"shape\": not an array\n");
}

}  // namespace
}  // namespace parity
