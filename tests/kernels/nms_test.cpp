// nms: the reference against the LibTorch-composed nms (exact), against an O(n^2) greedy written
// here from torchvision's documented definition, and the invariants any correct nms keeps; the
// aten backend's torchvision::nms (when its library is here) against both, up to score ties.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <limits>
#include <numeric>

#include "kernel_test_util.h"
#include "kernels/aten/plugin.h"
#include "kernels/op_line.h"
#include "kernels/nms/nms.h"

namespace parity {
namespace {

struct Problem {
  std::string line;
  std::vector<Tensor> in;  // boxes, scores[, classes]
};

// Valid x1y1x2y2 boxes clustered so that many overlap, scores in (0, 1) quantised so that
// ties occur; YOLOv5-like coordinates (0..640).
rc::Gen<Problem> nms_problem() {
  return rc::gen::exec([] {
    const int64_t n = *rc::gen::weightedElement<int64_t>({{1, 0}, {1, 1}, {6, *rc::gen::inRange<int64_t>(2, 300)}});
    const double iou = *rc::gen::element(0.0, 0.3, 0.45, 0.5, 0.6, 0.65, 1.0);
    const bool batched = *rc::gen::arbitrary<bool>();
    Problem p;
    p.line = "nms boxes=" + std::to_string(n) + "x4 iou=" + shortest_double(iou) + (batched ? " batched" : "");
    const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
    const RngStream rng(seed, p.line, 0);
    Tensor boxes(DType::Float32, Shape{n, 4}), scores(DType::Float32, Shape{n}), classes(DType::Float32, Shape{n});
    const double spread = *rc::gen::element(20.0, 100.0, 640.0);
    const double steps = *rc::gen::element(5.0, 50.0, 1e6);
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t k = uint64_t(i) * 8;
      const float cx = rng.uniform_f32(k, 0, float(spread)), cy = rng.uniform_f32(k + 1, 0, float(spread));
      const float w = rng.uniform_f32(k + 2, 1, 120), h = rng.uniform_f32(k + 3, 1, 120);
      float* b = boxes.mutable_data<float>() + i * 4;
      b[0] = cx - w / 2, b[1] = cy - h / 2, b[2] = cx + w / 2, b[3] = cy + h / 2;
      scores.mutable_data<float>()[i] = float(std::floor(rng.uniform_f64(k + 4, 0, 1) * steps + 1) / (steps + 2));
      classes.mutable_data<float>()[i] = float(rng.integer(k + 5, 0, 3));
    }
    p.in = {boxes, scores};
    if (batched) p.in.push_back(classes);
    return p;
  });
}

// torchvision.ops.nms by its definition: repeatedly take the highest-scoring remaining box
// (lowest index among equal scores) and drop every remaining box whose IoU with it exceeds
// the threshold. IoU in float32 as torchvision computes it.
std::vector<int64_t> greedy_nms(const float* b, const float* s, int64_t n, double thr) {
  auto iou = [&](int64_t i, int64_t j) {
    const float w = std::max(0.0f, std::min(b[i * 4 + 2], b[j * 4 + 2]) - std::max(b[i * 4], b[j * 4]));
    const float h = std::max(0.0f, std::min(b[i * 4 + 3], b[j * 4 + 3]) - std::max(b[i * 4 + 1], b[j * 4 + 1]));
    const float ai = (b[i * 4 + 2] - b[i * 4]) * (b[i * 4 + 3] - b[i * 4 + 1]);
    const float aj = (b[j * 4 + 2] - b[j * 4]) * (b[j * 4 + 3] - b[j * 4 + 1]);
    const float inter = w * h;
    return double(inter / (ai + aj - inter));
  };
  std::vector<bool> alive(size_t(n), true);
  std::vector<int64_t> keep;
  while (true) {
    int64_t best = -1;
    for (int64_t i = 0; i < n; ++i) {
      if (alive[size_t(i)] && (best < 0 || s[i] > s[best])) best = i;
    }
    if (best < 0) return keep;
    keep.push_back(best);
    alive[size_t(best)] = false;
    for (int64_t j = 0; j < n; ++j) {
      if (alive[size_t(j)] && iou(best, j) > thr) alive[size_t(j)] = false;
    }
  }
}

std::vector<int64_t> as_vector(const Tensor& t) { return {t.data<int64_t>(), t.data<int64_t>() + t.numel()}; }

Tensor composed_aten_nms(const std::string& line, const std::vector<Tensor>& in) {
  return aten_plugin().nms_composed(line, in);
}

bool torchvision_here() {
  return std::string(aten_plugin().nms_kind()).rfind("torchvision::nms", 0) == 0;
}

// Whether `keep` is what greedy nms gives for some order among equal scores: kept boxes by
// non-increasing score, no two kept above the threshold, every other box above the threshold
// with a kept box of at least its score (then visiting kept boxes first among ties yields
// exactly `keep`). IoU in float32 as torchvision computes it, the kept box first: no slack.
bool greedy_up_to_ties(const std::vector<int64_t>& keep, const float* b, const float* s, int64_t n, double thr) {
  auto iou = [&](int64_t kept, int64_t j) { return double(nms_iou(b, kept, j, nms_area(b, kept), nms_area(b, j))); };
  std::vector<bool> kept(size_t(n), false);
  for (size_t k = 0; k < keep.size(); ++k) {
    if (keep[k] < 0 || keep[k] >= n || kept[size_t(keep[k])]) return false;
    if (k > 0 && s[keep[k - 1]] < s[keep[k]]) return false;
    for (size_t e = 0; e < k; ++e) {
      if (iou(keep[e], keep[k]) > thr) return false;
    }
    kept[size_t(keep[k])] = true;
  }
  for (int64_t j = 0; j < n; ++j) {
    if (kept[size_t(j)]) continue;
    bool dropped = false;
    for (int64_t i : keep) dropped = dropped || (s[i] >= s[j] && iou(i, j) > thr);
    if (!dropped) return false;
  }
  return true;
}

RC_GTEST_PROP(Nms, RefEqualsTheComposedAtenAndTheGreedyDefinition, ()) {
  const Problem pr = *nms_problem();
  const NmsParams p = NmsParams::parse(pr.line);
  const std::vector<int64_t> ref = as_vector(backend("ref").run(pr.line, pr.in)[0]);
  RC_ASSERT(ref == as_vector(composed_aten_nms(pr.line, pr.in)));
  const Tensor shifted = nms_offset_boxes(p, pr.in);
  RC_ASSERT(ref == greedy_nms(shifted.data<float>(), pr.in[1].data<float>(), p.n, p.iou));
}

// The reference skips pairs whose x ranges do not overlap (NmsXGrid): boxes that are inverted,
// empty, NaN, infinite or huge must still give the greedy definition's answer.
RC_GTEST_PROP(Nms, RefEqualsTheGreedyDefinitionWithOddBoxes, ()) {
  Problem pr = *nms_problem();
  const NmsParams p = NmsParams::parse(pr.line);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  float* b = pr.in[0].mutable_data<float>();
  for (int64_t i = 0; i < p.n; ++i) {
    float* box = b + i * 4;
    switch (*rc::gen::weightedElement<int>({{12, 0}, {1, 1}, {1, 2}, {1, 3}, {1, 4}, {1, 5}})) {
      case 1: std::swap(box[0], box[2]); break;     // inverted
      case 2: box[2] = box[0]; break;               // no width
      case 3: box[*rc::gen::inRange(0, 4)] = nan; break;
      case 4: box[0] = -1e6f, box[2] = 1e6f; break;  // spans everything
      case 5: box[*rc::gen::element(0, 2)] = *rc::gen::element(-inf, inf); break;
      default: break;
    }
  }
  const std::vector<int64_t> ref = as_vector(backend("ref").run(pr.line, pr.in)[0]);
  const Tensor shifted = nms_offset_boxes(p, pr.in);
  RC_ASSERT(ref == greedy_nms(shifted.data<float>(), pr.in[1].data<float>(), p.n, p.iou));
}

// The aten backend's nms is torchvision's own kernel where its library loads: an oracle that
// shares no code with the reference. Its sort is not stable, so among equal scores its order is
// its own: equal to the composed nms when scores are distinct, a valid greedy nms always.
TEST(Nms, TorchvisionsNmsAgreesWithTheComposedOneUpToTies) {
  if (!torchvision_here()) GTEST_SKIP() << "torchvision's library is not here: the aten nms is the composed one";
  EXPECT_TRUE(rc::check([] {
    const Problem pr = *nms_problem();
    const NmsParams p = NmsParams::parse(pr.line);
    const std::vector<int64_t> tv = as_vector(backend("aten").run(pr.line, pr.in)[0]);
    const Tensor shifted = nms_offset_boxes(p, pr.in);
    const float* sc = pr.in[1].data<float>();
    RC_ASSERT(greedy_up_to_ties(tv, shifted.data<float>(), sc, p.n, p.iou));
    std::vector<float> sorted(sc, sc + p.n);
    std::sort(sorted.begin(), sorted.end());
    const bool ties = std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end();
    RC_TAG(ties ? "score ties" : "distinct scores");
    if (!ties) RC_ASSERT(tv == as_vector(composed_aten_nms(pr.line, pr.in)));
  }));
}

TEST(Nms, TorchvisionKeepsBothBoxesExactlyAtTheThreshold) {
  if (!torchvision_here()) GTEST_SKIP() << "torchvision's library is not here: " << aten_plugin().nms_kind();
  // [0,0,3,1] and [1,0,4,1]: intersection 2, union 4, IoU exactly 0.5, which is not above 0.5.
  // A duplicate of the first box with an equal score goes whichever of the two is visited first.
  Tensor boxes(DType::Float32, Shape{3, 4}), scores(DType::Float32, Shape{3});
  const float b[] = {0, 0, 3, 1, 1, 0, 4, 1, 0, 0, 3, 1};
  std::copy(b, b + 12, boxes.mutable_data<float>());
  const float sc[] = {0.9f, 0.8f, 0.9f};
  std::copy(sc, sc + 3, scores.mutable_data<float>());
  std::vector<int64_t> tv = as_vector(backend("aten").run("nms boxes=3x4 iou=0.5", {boxes, scores})[0]);
  ASSERT_EQ(tv.size(), 2u);
  EXPECT_TRUE(tv[0] == 0 || tv[0] == 2);
  EXPECT_EQ(tv[1], 1);
  EXPECT_EQ(as_vector(composed_aten_nms("nms boxes=3x4 iou=0.5", {boxes, scores})), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(as_vector(backend("ref").run("nms boxes=3x4 iou=0.5", {boxes, scores})[0]), (std::vector<int64_t>{0, 1}));
}

RC_GTEST_PROP(Nms, KeepsTheInvariants, ()) {
  const Problem pr = *nms_problem();
  const NmsParams p = NmsParams::parse(pr.line);
  const std::vector<int64_t> keep = as_vector(backend("ref").run(pr.line, pr.in)[0]);
  const Tensor shifted = nms_offset_boxes(p, pr.in);
  const float* b = shifted.data<float>();
  const float* s = pr.in[1].data<float>();
  auto iou = [&](int64_t i, int64_t j) {
    const double w = std::max(0.0, double(std::min(b[i * 4 + 2], b[j * 4 + 2])) - std::max(b[i * 4], b[j * 4]));
    const double h = std::max(0.0, double(std::min(b[i * 4 + 3], b[j * 4 + 3])) - std::max(b[i * 4 + 1], b[j * 4 + 1]));
    const double ai = double(b[i * 4 + 2] - b[i * 4]) * (b[i * 4 + 3] - b[i * 4 + 1]);
    const double aj = double(b[j * 4 + 2] - b[j * 4]) * (b[j * 4 + 3] - b[j * 4 + 1]);
    return w * h / (ai + aj - w * h);
  };
  const double slack = 1e-5;  // float32 IoU against this float64 one
  std::vector<int64_t> rank(size_t(p.n), -1);
  for (size_t k = 0; k < keep.size(); ++k) rank[size_t(keep[k])] = int64_t(k);
  // Kept boxes come by descending score, equal scores by ascending index (the documented ties).
  for (size_t k = 1; k < keep.size(); ++k) {
    RC_ASSERT(s[keep[k - 1]] > s[keep[k]] || (s[keep[k - 1]] == s[keep[k]] && keep[k - 1] < keep[k]));
  }
  // No two kept boxes overlap above the threshold.
  for (size_t a = 0; a < keep.size(); ++a) {
    for (size_t c = a + 1; c < keep.size(); ++c) RC_ASSERT(iou(keep[a], keep[c]) <= p.iou + slack);
  }
  // Every dropped box overlaps a kept box ranked before it above the threshold.
  for (int64_t j = 0; j < p.n; ++j) {
    if (rank[size_t(j)] >= 0) continue;
    bool explained = false;
    for (int64_t i : keep) {
      const bool before = s[i] > s[j] || (s[i] == s[j] && i < j);
      explained = explained || (before && iou(i, j) > p.iou - slack);
    }
    RC_ASSERT(explained);
  }
  // Batched: boxes of different classes never suppress each other.
  if (p.batched) {
    for (int64_t j = 0; j < p.n; ++j) {
      if (rank[size_t(j)] >= 0) continue;
      bool same_class = false;
      for (int64_t i : keep) same_class = same_class || (pr.in[2].data<float>()[i] == pr.in[2].data<float>()[j] && iou(i, j) > p.iou - slack);
      RC_ASSERT(same_class);
    }
  }
}

TEST(Nms, TiesGoToTheLowerIndex) {
  // Two identical boxes with equal scores: the lower index is kept (torchvision's own order among
  // ties is unspecified; the test above allows it either).
  Tensor boxes(DType::Float32, Shape{3, 4}), scores(DType::Float32, Shape{3});
  const float b[] = {0, 0, 10, 10, 0, 0, 10, 10, 100, 100, 110, 110};
  std::copy(b, b + 12, boxes.mutable_data<float>());
  const float sc[] = {0.5f, 0.5f, 0.4f};
  std::copy(sc, sc + 3, scores.mutable_data<float>());
  EXPECT_EQ(as_vector(backend("ref").run("nms boxes=3x4 iou=0.5", {boxes, scores})[0]), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(as_vector(composed_aten_nms("nms boxes=3x4 iou=0.5", {boxes, scores})), (std::vector<int64_t>{0, 2}));
}

TEST(Nms, BadParameters) {
  EXPECT_THROW(NmsParams::parse("nms boxes=10x5 iou=0.5"), Error);
  EXPECT_THROW(NmsParams::parse("nms boxes=10x4"), Error);
  EXPECT_THROW(NmsParams::parse("nms boxes=10x4 iou=1.5"), Error);
  EXPECT_THROW(NmsParams::parse("nms boxes=10x4 iou=0.5 max_wh=100"), Error);
  EXPECT_EQ(NmsParams::parse("nms boxes=10x4 iou=0.6 batched").str(), "nms boxes=10x4 iou=0.6 batched");
}

}  // namespace
}  // namespace parity
