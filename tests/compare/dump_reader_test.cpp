// The dump reader trusts bytes, not manifests: hashes are recomputed from what is read, layers
// are numbered by occurrence of their name, sources resolve to the layer that produced them, and
// a model run's dump says what it was computed from and where each of its inputs came from.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <set>

#include "cases/yolov5.h"
#include "compare/dump_reader.h"
#include "core/error.h"
#include "core/hash.h"
#include "core/npy.h"
#include "runners/dump.h"
#include "runners/model_run.h"
#include "runners/weights.h"
#include "support/test_support.h"

namespace parity {
namespace {

Tensor floats(std::vector<float> values, std::vector<int64_t> dims = {}) {
  if (dims.empty()) dims = {int64_t(values.size())};
  Tensor t(DType::Float32, Shape(dims));
  for (size_t i = 0; i < values.size(); ++i) t.mutable_data<float>()[i] = values[i];
  return t;
}

// A layer "name" with one input and one output.
void add(DumpWriter& w, const std::string& name, const std::string& source, const Tensor& in, const Tensor& out) {
  w.add_layer(name, "silu x=" + in.shape().str(), 0, {{"x", source, in}}, {{"out0", "", out}});
}

std::string write_one_layer(const std::string& dir, const Tensor& out) {
  DumpWriter w(dir, DumpInfo{"unit", "ref", "cpu", 1}, false);
  add(w, "a", "", floats({0, 0, 0, 0}), out);
  w.finish();
  return dir;
}

// Overwrites the last float of a .npy in place: the header, and so read_dump's checks, still pass.
void change_last_element(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "r+b");
  ASSERT_NE(f, nullptr) << path;
  const float other = 12345.f;
  ASSERT_EQ(std::fseek(f, -4, SEEK_END), 0);
  ASSERT_EQ(std::fwrite(&other, 4, 1, f), 1u);
  std::fclose(f);
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

TEST(DumpReader, ChangedElementMakesTheDumpCorrupt) {
  test::TempDir tmp;
  const Dump d = read_dump(write_one_layer(tmp.file("d"), floats({1, 2, 3, 4})));
  const DumpTensorInfo& out = d.layers[0].outputs[0];
  change_last_element(d.dir + "/" + out.file);
  const Dump reread = read_dump(d.dir);  // headers only: still opens
  const std::vector<std::function<void()>> reads = {[&] { reread.load(out); }, [&] { reread.hash_of(out); }};
  for (const auto& read : reads) {
    try {
      read();
      ADD_FAILURE() << "a changed element was not noticed";
    } catch (const Error& e) {
      EXPECT_EQ(e.file_path(), d.dir + "/" + out.file);
      EXPECT_NE(e.message().find(out.hash + " recorded"), std::string::npos) << e.what();
      EXPECT_NE(e.message().find("the dump is corrupt"), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(reread.load(d.layers[0].inputs[0]));
}

TEST(DumpReader, RecordedHashesAreNotTrusted) {
  test::TempDir tmp;
  const Dump a = read_dump(write_one_layer(tmp.file("a"), floats({1, 2, 3, 4})));
  const std::string b_dir = write_one_layer(tmp.file("b"), floats({1, 2, 3, 5}));
  const std::string b_hash = read_dump(b_dir).layers[0].outputs[0].hash;
  const DumpTensorInfo& ta = a.layers[0].outputs[0];
  std::string manifest = test::read_text(b_dir + "/manifest.json");
  replace_all(manifest, b_hash, ta.hash);  // b claims a's content
  test::write_bytes(b_dir + "/manifest.json", manifest);
  const Dump b = read_dump(b_dir);
  const DumpTensorInfo& tb = b.layers[0].outputs[0];
  ASSERT_EQ(ta.hash, tb.hash);
  EXPECT_EQ(a.hash_of(ta), ta.hash);
  EXPECT_THROW(b.hash_of(tb), Error);

  // Without a recorded hash (older manifests) there is nothing to check: the computed one counts.
  replace_all(manifest, ",\"hash\":\"" + ta.hash + "\"", "");
  test::write_bytes(b_dir + "/manifest.json", manifest);
  const Dump unhashed = read_dump(b_dir);
  ASSERT_EQ(unhashed.layers[0].outputs[0].hash, "");
  EXPECT_EQ(unhashed.hash_of(unhashed.layers[0].outputs[0]), b_hash);
  EXPECT_NE(unhashed.hash_of(unhashed.layers[0].outputs[0]), a.hash_of(ta));
}

TEST(DumpReader, RepeatedNamesAreNumberedAndSourcesResolveToTheLatest) {
  test::TempDir tmp;
  DumpWriter w(tmp.file("d"), DumpInfo{"unit", "ref", "cpu", 1}, false);
  const Tensor t1 = floats({1, 2}), t2 = floats({3, 4}), t3 = floats({5, 6});
  add(w, "a", "", t1, t1);           // 0
  add(w, "b", "a:out0", t1, t2);     // 1: a as layer 0 left it
  add(w, "a", "a:out0", t1, t3);     // 2: the earlier a, never itself
  add(w, "a", "a:out0", t3, t1);     // 3: the a just before
  add(w, "c", "b:out1", t2, t2);     // 4: b has no out1
  add(w, "d", "nowhere:out0", t2, t2);  // 5: no such layer
  w.finish();
  const Dump d = read_dump(tmp.file("d"));
  ASSERT_EQ(d.layers.size(), 6u);
  std::vector<int64_t> occurrence, source_layer;
  for (const DumpLayer& l : d.layers) {
    occurrence.push_back(l.occurrence);
    source_layer.push_back(l.inputs[0].source_layer);
  }
  EXPECT_EQ(occurrence, (std::vector<int64_t>{0, 0, 1, 2, 0, 0}));
  EXPECT_EQ(source_layer, (std::vector<int64_t>{-1, 0, 0, 2, -1, -1}));
}

// An input is its source's file when it is that output as is; a changed or reshaped copy is
// written on its own and marked derived, also when the source layer was left out of the dump.
TEST(DumpReader, DerivedInputsAreMarked) {
  test::TempDir tmp;
  DumpWriter w(tmp.file("d"), DumpInfo{"unit", "ref", "cpu", 1}, false);
  const Tensor t = floats({1, 2, 3, 4});
  add(w, "a", "", t, t);
  add(w, "same", "a:out0", t, t);
  add(w, "sliced", "a:out0", floats({1, 2}), t);
  add(w, "reshaped", "a:out0", floats({1, 2, 3, 4}, {2, 2}), t);
  w.skip_layer("skipped", {{"out0", "", t}});
  add(w, "same_as_skipped", "skipped:out0", t, t);
  add(w, "sliced_from_skipped", "skipped:out0", floats({1, 2}), t);
  w.finish();
  const Dump d = read_dump(tmp.file("d"));
  const DumpTensorInfo& a_out = d.layers[0].outputs[0];
  EXPECT_FALSE(d.layers[1].inputs[0].derived);
  EXPECT_EQ(d.layers[1].inputs[0].file, a_out.file);
  for (const size_t i : {size_t(2), size_t(3)}) {
    const DumpTensorInfo& in = d.layers[i].inputs[0];
    EXPECT_TRUE(in.derived) << d.layers[i].name;
    EXPECT_NE(in.file, a_out.file) << d.layers[i].name;
    EXPECT_EQ(in.source_layer, 0) << d.layers[i].name;
    EXPECT_NO_THROW(d.load(in)) << d.layers[i].name;
  }
  ASSERT_EQ(d.layers.size(), 6u);
  EXPECT_FALSE(d.layers[4].inputs[0].derived);
  EXPECT_TRUE(d.layers[5].inputs[0].derived);
  EXPECT_EQ(d.layers[5].inputs[0].source_layer, -1);
}

TEST(DumpReader, ManifestWithoutRunStillReads) {
  const Dump d =
      parse_manifest(R"({"format": "parity-dump", "version": 1, "model": "m", "seed": 3, "layers": []})", "x/manifest.json");
  EXPECT_TRUE(d.run.empty());
  EXPECT_EQ(d.model, "m");
  EXPECT_THROW(parse_manifest(R"({"format": "parity-dump", "version": 1, "run": [], "layers": []})", "x/manifest.json"), Error);
}

// A dump written without run details (replay, golden) still names its model and seed.
TEST(DumpReader, RunHoldsModelAndSeedAtLeast) {
  test::TempDir tmp;
  const Dump d = read_dump(write_one_layer(tmp.file("d"), floats({1})));
  EXPECT_EQ(d.run, (std::map<std::string, std::string>{{"model", "unit"}, {"seed", "1"}}));
}

class DumpReaderModel : public ::testing::Test {
 protected:
  static constexpr int64_t kImg = 64;
  static constexpr uint64_t kSeed = 4;

  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    image_ = new Tensor(DType::Float32, Shape{1, 3, kImg, kImg});
    for (int64_t i = 0; i < image_->numel(); ++i) image_->mutable_data<float>()[i] = float((i * 37) % 101) / 101.f;
    write_npy(dir_->file("image.npy"), *image_);
    RunOptions o;
    o.model = "yolov5n";
    o.img = kImg;
    o.seed = kSeed;
    o.input = dir_->file("image.npy");
    o.dump_dir = dir_->file("dump");
    run_model(o);
  }
  static void TearDownTestSuite() {
    delete image_;
    delete dir_;
  }

  static Weights weights() {
    const Yolov5Variant& v = yolov5_variant("yolov5n");
    return load_weights(v, yolov5_graph(v, kImg, 1), "", kSeed);
  }

  static test::TempDir* dir_;
  static Tensor* image_;
};

test::TempDir* DumpReaderModel::dir_ = nullptr;
Tensor* DumpReaderModel::image_ = nullptr;

TEST_F(DumpReaderModel, RunSaysWhatTheDumpWasComputedFrom) {
  const Weights w = weights();
  std::vector<const Tensor*> chain;
  for (const auto& [key, t] : w) chain.push_back(&t);
  const Dump d = read_dump(dir_->file("dump"));
  EXPECT_EQ(d.run, (std::map<std::string, std::string>{{"model", "yolov5n"},
                                                       {"img", std::to_string(kImg)},
                                                       {"batch", "1"},
                                                       {"seed", std::to_string(kSeed)},
                                                       {"weights", "seeded"},
                                                       {"weights_digest", chained_content_hash(chain)},
                                                       {"input", dir_->file("image.npy")},
                                                       {"input_digest", content_hash(*image_)}}));
}

// Every input comes from a layer, verbatim or derived, except the image and the weights.
TEST_F(DumpReaderModel, OnlyImageAndWeightsHaveNoSource) {
  std::set<std::string> unproduced = {content_hash(*image_)};
  for (const auto& [key, t] : weights()) unproduced.insert(content_hash(t));
  const Dump d = read_dump(dir_->file("dump"));
  bool saw_nms = false;
  for (const DumpLayer& l : d.layers) {
    saw_nms = saw_nms || l.name == "nms.0.output";
    for (const DumpTensorInfo& t : l.inputs) {
      SCOPED_TRACE(l.name + " " + t.role);
      if (t.source.empty()) {
        EXPECT_EQ(unproduced.count(d.hash_of(t)), 1u) << "an input no layer produced that is neither image nor weight";
        continue;
      }
      ASSERT_GE(t.source_layer, 0) << t.source;
      ASSERT_LT(t.source_layer, int64_t(&l - d.layers.data()));
      const DumpLayer& producer = d.layers[size_t(t.source_layer)];
      const std::string role = t.source.substr(t.source.rfind(':') + 1);
      for (const DumpTensorInfo& o : producer.outputs) {
        if (o.role == role) {
          EXPECT_EQ(t.derived, d.hash_of(o) != d.hash_of(t) || o.shape != t.shape);
        }
      }
    }
  }
  EXPECT_TRUE(saw_nms) << "post-processing kept nothing: its glue went untested";
}

// With --layers, inputs taken from layers left out still say whether they are those outputs as is.
TEST_F(DumpReaderModel, DerivedIsKnownForLayersLeftOut) {
  RunOptions o;
  o.model = "yolov5n";
  o.img = kImg;
  o.seed = kSeed;
  o.input = dir_->file("image.npy");
  o.layers = "^nms\\.(xc|0\\.multi_label\\.nonzero)$";
  o.dump_dir = dir_->file("filtered");
  run_model(o);
  const Dump d = read_dump(o.dump_dir);
  ASSERT_EQ(d.layers.size(), 2u);
  const DumpTensorInfo &obj = d.layers[0].inputs[0], &gt = d.layers[1].inputs[0];
  EXPECT_EQ(obj.source_layer, -1);
  EXPECT_TRUE(obj.derived);  // prediction[..., 4]
  EXPECT_EQ(gt.source_layer, -1);
  EXPECT_FALSE(gt.derived);  // nms.0.multi_label.gt's output as is
}

}  // namespace
}  // namespace parity
