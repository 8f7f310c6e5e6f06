// The judges of ops whose correct output is not unique: every output a correct kernel may give
// (the reference's, LibTorch's, another tie order, either side of a near-threshold IoU) passes;
// real defects fail. Expected values are derived here by hand or from first principles.
#include "kernels/order_checks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/rng.h"
#include "kernels/backend.h"
#include "kernels/nms/nms.h"

namespace parity {
namespace {

Tensor f32(const std::vector<float>& v) {
  Tensor t(DType::Float32, Shape{int64_t(v.size())});
  std::copy(v.begin(), v.end(), t.mutable_data<float>());
  return t;
}

Tensor i64(const std::vector<int64_t>& v) {
  Tensor t(DType::Int64, Shape{int64_t(v.size())});
  std::copy(v.begin(), v.end(), t.mutable_data<int64_t>());
  return t;
}

Tensor boxes_of(const std::vector<float>& xyxy) {
  Tensor t(DType::Float32, Shape{int64_t(xyxy.size() / 4), 4});
  std::copy(xyxy.begin(), xyxy.end(), t.mutable_data<float>());
  return t;
}

std::vector<int64_t> as_vector(const Tensor& t) { return {t.data<int64_t>(), t.data<int64_t>() + t.numel()}; }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

struct NmsProblem {
  std::string line;
  std::vector<Tensor> in;  // boxes, scores[, classes]
  Tensor boxes;            // as nms sees them: class-offset when batched
  double iou = 0.5;

  const float* score() const { return in[1].data<float>(); }
  NmsCheck judge(const std::vector<int64_t>& keep, double delta = 1e-5) const {
    return check_nms_keep(boxes, in[1], iou, i64(keep), delta);
  }
  // IoU from its definition in torchvision's float32 operation order, not through nms.h.
  double iou_of(int64_t i, int64_t j) const {
    const float* b = boxes.data<float>();
    const float w = std::max(0.0f, std::min(b[i * 4 + 2], b[j * 4 + 2]) - std::max(b[i * 4], b[j * 4]));
    const float h = std::max(0.0f, std::min(b[i * 4 + 3], b[j * 4 + 3]) - std::max(b[i * 4 + 1], b[j * 4 + 1]));
    const float ai = (b[i * 4 + 2] - b[i * 4]) * (b[i * 4 + 3] - b[i * 4 + 1]);
    const float aj = (b[j * 4 + 2] - b[j * 4]) * (b[j * 4 + 3] - b[j * 4 + 1]);
    return double(w * h / (ai + aj - w * h));
  }
};

NmsProblem make_problem(std::vector<Tensor> in, double iou, bool batched) {
  NmsParams params;
  params.n = in[0].shape()[0];
  params.iou = iou;
  params.batched = batched;
  NmsProblem p;
  p.line = params.str();
  p.boxes = nms_offset_boxes(params, in);
  p.in = std::move(in);
  p.iou = iou;
  return p;
}

// Boxes crowded so that most overlap, scores on 50 levels so that ties are common, 3 classes.
NmsProblem random_problem(int64_t n, double iou, bool batched, uint64_t seed) {
  const RngStream rng(seed);
  Tensor boxes(DType::Float32, Shape{n, 4}), scores(DType::Float32, Shape{n}), classes(DType::Float32, Shape{n});
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t k = uint64_t(i) * 8;
    const float cx = rng.uniform_f32(k, 0, 200), cy = rng.uniform_f32(k + 1, 0, 200);
    const float w = rng.uniform_f32(k + 2, 5, 60), h = rng.uniform_f32(k + 3, 5, 60);
    float* b = boxes.mutable_data<float>() + i * 4;
    b[0] = cx - w / 2, b[1] = cy - h / 2, b[2] = cx + w / 2, b[3] = cy + h / 2;
    scores.mutable_data<float>()[i] = float(rng.integer(k + 4, 1, 51)) / 50;
    classes.mutable_data<float>()[i] = float(rng.integer(k + 5, 0, 3));
  }
  std::vector<Tensor> in = {boxes, scores};
  if (batched) in.push_back(classes);
  return make_problem(std::move(in), iou, batched);
}

std::vector<NmsProblem> random_problems() {
  return {random_problem(1500, 0.45, true, 1), random_problem(1500, 0.6, false, 2), random_problem(400, 0.3, false, 3)};
}

std::vector<int64_t> keep_of(const std::string& backend_name, const NmsProblem& p) {
  const Backend& b = backend(backend_name);
  b.begin_run();  // faulty backends strike the first nms call of a run
  return as_vector(b.run(p.line, p.in)[0]);
}

TEST(NmsKeepCheck, ReferenceOutputIsValid) {
  for (const NmsProblem& p : random_problems()) {
    SCOPED_TRACE(p.line);
    const NmsCheck c = p.judge(keep_of("ref", p));
    EXPECT_TRUE(c.valid) << c.violation;
    EXPECT_EQ(c.violation, "");
  }
}

TEST(NmsKeepCheck, ValidAtYoloCandidateScale) {
  const NmsProblem p = random_problem(30000, 0.45, true, 4);
  const std::vector<int64_t> keep = keep_of("ref", p);
  ASSERT_GT(keep.size(), 1000u);
  const NmsCheck c = p.judge(keep);
  EXPECT_TRUE(c.valid) << c.violation;
}

// The x-grid prefilter changes nothing: the same verdict, counts and first violation as scoring
// every pair, on valid keep lists, on ones a planted defect broke, and on a reversed one.
TEST(NmsKeepCheck, GridPrefilterEqualsAllPairs) {
  std::vector<NmsProblem> problems = random_problems();
  problems.push_back(random_problem(8000, 0.45, true, 5));
  for (const NmsProblem& p : problems) {
    SCOPED_TRACE(p.line);
    std::vector<std::vector<int64_t>> keeps = {keep_of("ref", p), keep_of("faulty:nms_drop", p), keep_of("faulty:nms_tie", p)};
    keeps.push_back(std::vector<int64_t>(keeps[0].rbegin(), keeps[0].rend()));
    for (const std::vector<int64_t>& keep : keeps) {
      for (const double delta : {1e-5, 0.05}) {
        const NmsCheck grid = check_nms_keep(p.boxes, p.in[1], p.iou, i64(keep), delta);
        const NmsCheck all = check_nms_keep(p.boxes, p.in[1], p.iou, i64(keep), delta, /*all_pairs=*/true);
        EXPECT_EQ(grid.valid, all.valid);
        EXPECT_EQ(grid.ties, all.ties);
        EXPECT_EQ(grid.near_threshold, all.near_threshold);
        EXPECT_EQ(grid.violation, all.violation);
      }
    }
  }
}

TEST(NmsKeepCheck, AtenOutputIsValid) {
  if (const std::string why = backend("aten").unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  for (const NmsProblem& p : random_problems()) {
    SCOPED_TRACE(p.line);
    const NmsCheck c = p.judge(keep_of("aten", p));
    EXPECT_TRUE(c.valid) << c.violation;
  }
}

TEST(NmsKeepCheck, ReversedKeepListFails) {
  for (const NmsProblem& p : random_problems()) {
    SCOPED_TRACE(p.line);
    std::vector<int64_t> keep = keep_of("ref", p);
    ASSERT_GE(keep.size(), 2u);
    ASSERT_GT(p.score()[keep.front()], p.score()[keep.back()]);
    std::reverse(keep.begin(), keep.end());
    const NmsCheck c = p.judge(keep);
    EXPECT_FALSE(c.valid);
    EXPECT_TRUE(contains(c.violation, "decreasing score")) << c.violation;
  }
}

// A kept box that nothing else of its score or higher comes near: dropping it cannot be a tie
// or a near-threshold call.
int64_t isolated_kept_position(const NmsProblem& p, const std::vector<int64_t>& keep) {
  for (size_t k = keep.size() / 2; k < keep.size(); ++k) {
    bool isolated = true;
    for (const int64_t j : keep) {
      if (j != keep[k] && p.score()[j] >= p.score()[keep[k]] && p.iou_of(j, keep[k]) > p.iou - 1e-3) isolated = false;
    }
    if (isolated) return int64_t(k);
  }
  return -1;
}

TEST(NmsKeepCheck, DroppedKeptBoxFails) {
  for (const NmsProblem& p : random_problems()) {
    SCOPED_TRACE(p.line);
    std::vector<int64_t> keep = keep_of("ref", p);
    const int64_t k = isolated_kept_position(p, keep);
    ASSERT_GE(k, 0);
    keep.erase(keep.begin() + k);
    const NmsCheck c = p.judge(keep);
    EXPECT_FALSE(c.valid);
    EXPECT_TRUE(contains(c.violation, "is not kept but no kept box")) << c.violation;
  }
}

TEST(NmsKeepCheck, FaultyNmsDropFails) {
  for (const NmsProblem& p : random_problems()) {
    SCOPED_TRACE(p.line);
    const std::vector<int64_t> ref = keep_of("ref", p), dropped = keep_of("faulty:nms_drop", p);
    ASSERT_EQ(dropped, std::vector<int64_t>(ref.begin() + 1, ref.end()));
    const NmsCheck c = p.judge(dropped);
    EXPECT_FALSE(c.valid);
    EXPECT_TRUE(contains(c.violation, "is not kept but no kept box")) << c.violation;
  }
}

TEST(NmsKeepCheck, ExtraSuppressedBoxFails) {
  for (const NmsProblem& p : random_problems()) {
    SCOPED_TRACE(p.line);
    std::vector<int64_t> keep = keep_of("ref", p);
    const std::set<int64_t> kept(keep.begin(), keep.end());
    // A box that a higher-scoring kept box overlaps clearly above the threshold.
    int64_t extra = -1;
    for (int64_t x = 0; x < p.in[1].numel() && extra < 0; ++x) {
      for (const int64_t j : keep) {
        if (!kept.count(x) && p.score()[j] > p.score()[x] && p.iou_of(j, x) > p.iou + 1e-3) extra = x;
      }
    }
    ASSERT_GE(extra, 0);
    // Listed after every kept box of its score or higher, so the order stays non-increasing.
    const auto at = std::find_if(keep.begin(), keep.end(), [&](int64_t j) { return p.score()[j] < p.score()[extra]; });
    keep.insert(at, extra);
    const NmsCheck c = p.judge(keep);
    EXPECT_FALSE(c.valid);
    EXPECT_EQ(c.violation.rfind("box " + std::to_string(extra) + " (", 0), 0u) << c.violation;
    EXPECT_TRUE(contains(c.violation, "exceeds the threshold")) << c.violation;
  }
}

// Box 0 suppresses box 3 (IoU 81/119); boxes 1 and 2 share a score and overlap nothing, so
// their order is the only freedom used.
NmsProblem one_tie_problem() {
  const Tensor boxes = boxes_of({0, 0, 10, 10, 20, 0, 30, 10, 40, 0, 50, 10, 1, 1, 11, 11});
  return make_problem({boxes, f32({0.9f, 0.8f, 0.8f, 0.7f})}, 0.5, false);
}

// torchvision's batched_nms on its per-class path (check_nms_keep_by_class): two classes whose
// boxes overlap across classes. Boxes 0 and 1 (class 0) overlap with IoU 0.81; box 2 (class 1)
// lies on box 0 exactly; box 3 (class 1) overlaps box 2 with IoU 0.81 too.
TEST(NmsKeepCheck, ByClassKeepsEachClassApart) {
  const Tensor boxes = boxes_of({0, 0, 10, 10, 0, 0, 10, 9, 0, 0, 10, 10, 0, 1, 10, 10});
  const Tensor scores = f32({0.9f, 0.8f, 0.7f, 0.6f}), classes = i64({0, 0, 1, 1});
  const auto judge = [&](const std::vector<int64_t>& keep) { return check_nms_keep_by_class(boxes, scores, classes, 0.5, i64(keep)); };
  EXPECT_TRUE(judge({0, 2}).valid) << judge({0, 2}).violation;  // one of each class
  // Box 2 is another class's: box 0 never suppresses it.
  const NmsCheck across = judge({0});
  EXPECT_FALSE(across.valid);
  EXPECT_TRUE(contains(across.violation, "class 1")) << across.violation;
  EXPECT_FALSE(judge({0, 1, 2}).valid);  // box 1 kept beside box 0 of its class
  EXPECT_FALSE(judge({2, 0}).valid);     // not in descending score
  EXPECT_FALSE(judge({0, 2, 2}).valid);  // a box twice
  // A plain nms ignoring classes keeps {0} only; the shifted boxes of the other path keep {0, 2}.
  NmsParams p;
  p.n = 4, p.iou = 0.5, p.by_class = true;
  const std::vector<Tensor> in = {boxes, scores, classes};
  EXPECT_EQ(as_vector(nms_ref(p, in)), (std::vector<int64_t>{0, 2}));
  EXPECT_TRUE(check_nms_keep(nms_offset_boxes(p, in), scores, 0.5, i64({0, 2})).valid);
}

TEST(NmsKeepCheck, EqualScoreKeptBoxesPassInEitherOrder) {
  const NmsProblem p = one_tie_problem();
  ASSERT_EQ(keep_of("ref", p), (std::vector<int64_t>{0, 1, 2}));
  ASSERT_EQ(keep_of("faulty:nms_tie", p), (std::vector<int64_t>{0, 2, 1}));
  for (const std::vector<int64_t>& keep : {std::vector<int64_t>{0, 1, 2}, std::vector<int64_t>{0, 2, 1}}) {
    const NmsCheck c = p.judge(keep);
    EXPECT_TRUE(c.valid) << c.violation;
    EXPECT_EQ(c.ties, 1);
    EXPECT_EQ(c.near_threshold, 0);
  }
  // Box 3 is kept too: suppressed by box 0, not excused by any freedom.
  EXPECT_FALSE(p.judge({0, 2, 1, 3}).valid);
}

TEST(NmsKeepCheck, EitherOfTwoOverlappingEqualScoreBoxesMaySurvive) {
  // IoU 81/119: whichever is visited first suppresses the other.
  const NmsProblem p = make_problem({boxes_of({0, 0, 10, 10, 1, 1, 11, 11}), f32({0.8f, 0.8f})}, 0.5, false);
  ASSERT_EQ(keep_of("ref", p), (std::vector<int64_t>{0}));
  for (const std::vector<int64_t>& keep : {std::vector<int64_t>{0}, std::vector<int64_t>{1}}) {
    const NmsCheck c = p.judge(keep);
    EXPECT_TRUE(c.valid) << c.violation;
    EXPECT_EQ(c.ties, 1);
    EXPECT_EQ(c.near_threshold, 0);
  }
  EXPECT_FALSE(p.judge({0, 1}).valid);
  EXPECT_FALSE(p.judge({}).valid);
}

TEST(NmsKeepCheck, FaultyNmsTiePasses) {
  for (const NmsProblem& p : random_problems()) {
    SCOPED_TRACE(p.line);
    const std::vector<int64_t> ref = keep_of("ref", p), tie = keep_of("faulty:nms_tie", p);
    ASSERT_NE(tie, ref);  // the defect struck
    const NmsCheck c = p.judge(tie);
    EXPECT_TRUE(c.valid) << c.violation;
    EXPECT_GE(c.ties, 1);
  }
}

// Box 0 is the unit square, box 1 its bottom part of height h: IoU = h exactly (h, 1 + h and
// (1 + h) - h are all float32-exact for h = 0.5 ± 2^-20), 9.5e-7 from the threshold 0.5.
NmsProblem near_threshold_problem(float h) {
  return make_problem({boxes_of({0, 0, 1, 1, 0, 0, 1, h}), f32({0.9f, 0.8f})}, 0.5, false);
}

TEST(NmsKeepCheck, IouJustAboveTheThresholdMayBeDecidedEitherWay) {
  const NmsProblem p = near_threshold_problem(0.5f + 0x1p-20f);
  ASSERT_EQ(p.iou_of(0, 1), 0.5 + 0x1p-20);
  ASSERT_EQ(keep_of("ref", p), (std::vector<int64_t>{0}));
  const NmsCheck suppressed = p.judge({0}), kept = p.judge({0, 1});
  EXPECT_TRUE(suppressed.valid) << suppressed.violation;
  EXPECT_EQ(suppressed.near_threshold, 0);
  EXPECT_TRUE(kept.valid) << kept.violation;
  EXPECT_EQ(kept.near_threshold, 1);
  EXPECT_EQ(kept.ties, 0);
  const NmsCheck strict = p.judge({0, 1}, 0);
  EXPECT_FALSE(strict.valid);
  EXPECT_TRUE(contains(strict.violation, "box 1 (score 0.8) is kept after box 0 (score 0.9)")) << strict.violation;
}

TEST(NmsKeepCheck, IouJustBelowTheThresholdMayBeDecidedEitherWay) {
  const NmsProblem p = near_threshold_problem(0.5f - 0x1p-20f);
  ASSERT_EQ(p.iou_of(0, 1), 0.5 - 0x1p-20);
  ASSERT_EQ(keep_of("ref", p), (std::vector<int64_t>{0, 1}));
  const NmsCheck kept = p.judge({0, 1}), suppressed = p.judge({0});
  EXPECT_TRUE(kept.valid) << kept.violation;
  EXPECT_EQ(kept.near_threshold, 0);
  EXPECT_TRUE(suppressed.valid) << suppressed.violation;
  EXPECT_EQ(suppressed.near_threshold, 1);
  EXPECT_EQ(suppressed.ties, 0);
  const NmsCheck strict = p.judge({0}, 0);
  EXPECT_FALSE(strict.valid);
  EXPECT_TRUE(contains(strict.violation, "box 1 (score 0.8) is not kept")) << strict.violation;
  EXPECT_FALSE(p.judge({0}, 1e-7).valid);  // δ smaller than the 9.5e-7 gap
}

TEST(NmsKeepCheck, NanScoresRankAboveEveryNumber) {
  const Tensor disjoint = boxes_of({0, 0, 1, 1, 2, 0, 3, 1, 4, 0, 5, 1});
  const NmsProblem p = make_problem({disjoint, f32({0.9f, NAN, 0.8f})}, 0.5, false);
  ASSERT_EQ(keep_of("ref", p), (std::vector<int64_t>{1, 0, 2}));
  EXPECT_TRUE(p.judge({1, 0, 2}).valid);
  const NmsCheck c = p.judge({0, 1, 2});
  EXPECT_FALSE(c.valid);
  EXPECT_TRUE(contains(c.violation, "box 1 (score nan) is kept after box 0")) << c.violation;
}

TEST(NmsKeepCheck, IndicesMustBeDistinctBoxes) {
  const NmsProblem p = one_tie_problem();
  const NmsCheck out_of_range = p.judge({0, 1, 2, 4});
  EXPECT_FALSE(out_of_range.valid);
  EXPECT_TRUE(contains(out_of_range.violation, "keep[3] = 4 is not in [0, 4)")) << out_of_range.violation;
  const NmsCheck twice = p.judge({0, 1, 1});
  EXPECT_FALSE(twice.valid);
  EXPECT_TRUE(contains(twice.violation, "box 1 appears twice")) << twice.violation;
  EXPECT_FALSE(check_nms_keep(p.boxes, p.in[1], p.iou, f32({0, 1, 2})).valid);  // not int64
}

// Quantised keys, so that many tie, and NaNs.
Tensor argsort_input(int64_t n) {
  const RngStream rng(7);
  Tensor x(DType::Float32, Shape{n});
  for (int64_t i = 0; i < n; ++i) {
    x.mutable_data<float>()[i] = i % 97 == 5 ? NAN : float(rng.integer(uint64_t(i), -20, 20)) / 4;
  }
  return x;
}

// Adjacent equal keys in any sorted order: N minus the number of distinct keys, NaNs one key.
int64_t expected_ties(const Tensor& x) {
  const float* v = x.data<float>();
  std::set<float> distinct;
  bool nan = false;
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (std::isnan(v[i])) {
      nan = true;
    } else {
      distinct.insert(v[i]);
    }
  }
  return x.numel() - int64_t(distinct.size()) - int64_t(nan);
}

std::vector<int64_t> ref_argsort(const Tensor& x, bool descending) {
  return as_vector(backend("ref").run("argsort x=" + std::to_string(x.numel()) + (descending ? " descending" : ""), {x})[0]);
}

TEST(ArgsortOrderCheck, ReferenceOutputIsValidWithItsTiesCounted) {
  const Tensor x = argsort_input(1000);
  for (const bool descending : {false, true}) {
    SCOPED_TRACE(descending);
    const OrderCheck c = check_argsort(x, descending, i64(ref_argsort(x, descending)));
    EXPECT_TRUE(c.valid) << c.violation;
    EXPECT_EQ(c.ties, expected_ties(x));
    EXPECT_GT(c.ties, 900);
  }
}

TEST(ArgsortOrderCheck, SwappedTiePasses) {
  const Tensor x = argsort_input(1000);
  const float* v = x.data<float>();
  for (const bool descending : {false, true}) {
    SCOPED_TRACE(descending);
    std::vector<int64_t> order = ref_argsort(x, descending);
    size_t k = 0;
    while (k + 1 < order.size() && v[order[k]] != v[order[k + 1]]) ++k;
    ASSERT_LT(k + 1, order.size());
    std::swap(order[k], order[k + 1]);
    const OrderCheck c = check_argsort(x, descending, i64(order));
    EXPECT_TRUE(c.valid) << c.violation;
    EXPECT_EQ(c.ties, expected_ties(x));
  }
}

TEST(ArgsortOrderCheck, SwappedUnequalKeysFail) {
  const Tensor x = argsort_input(1000);
  const float* v = x.data<float>();
  for (const bool descending : {false, true}) {
    SCOPED_TRACE(descending);
    std::vector<int64_t> order = ref_argsort(x, descending);
    auto unequal_numbers = [&](size_t k) {
      return !std::isnan(v[order[k]]) && !std::isnan(v[order[k + 1]]) && v[order[k]] != v[order[k + 1]];
    };
    size_t k = 0;
    while (k + 1 < order.size() && !unequal_numbers(k)) ++k;
    ASSERT_LT(k + 1, order.size());
    std::swap(order[k], order[k + 1]);
    const OrderCheck c = check_argsort(x, descending, i64(order));
    EXPECT_FALSE(c.valid);
    EXPECT_TRUE(contains(c.violation, "index " + std::to_string(order[k + 1]) + " ")) << c.violation;
  }
}

TEST(ArgsortOrderCheck, NanMustRankHighest) {
  const Tensor x = f32({1, NAN, 2});
  EXPECT_TRUE(check_argsort(x, false, i64({0, 2, 1})).valid);
  EXPECT_TRUE(check_argsort(x, true, i64({1, 2, 0})).valid);
  EXPECT_FALSE(check_argsort(x, false, i64({1, 0, 2})).valid);
  EXPECT_FALSE(check_argsort(x, true, i64({2, 0, 1})).valid);
}

TEST(ArgsortOrderCheck, OrderMustBeAPermutation) {
  const Tensor x = argsort_input(1000);
  std::vector<int64_t> order = ref_argsort(x, true);
  const int64_t lost = order[1];
  order[1] = order[0];
  const OrderCheck twice = check_argsort(x, true, i64(order));
  EXPECT_FALSE(twice.valid);
  EXPECT_TRUE(contains(twice.violation, "index " + std::to_string(order[0]) + " appears twice")) << twice.violation;
  order[1] = lost;
  order.pop_back();
  EXPECT_FALSE(check_argsort(x, true, i64(order)).valid);
}

}  // namespace
}  // namespace parity
