#include "kernels/order_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <vector>

#include "core/error.h"
#include "kernels/nms/nms.h"

namespace parity {

namespace {

// a ranks strictly above b: nms visits it first, an ascending argsort puts it later. NaN ranks
// above every number (nms.h, argsort.h) and ties with NaN.
bool above(float a, float b) { return std::isnan(a) ? !std::isnan(b) : a > b; }
bool same_rank(float a, float b) { return !above(a, b) && !above(b, a); }

template <typename Check> bool fail(Check& c, std::string why) {
  c.valid = false;
  c.violation = std::move(why);
  return false;
}

// Inputs are the caller's responsibility (an error); the judged output's form is part of the
// judgement (a violation).
void require_float32(const char* fn, const char* name, const Tensor& t, bool shape_ok, const char* shape) {
  if (!t.defined() || t.dtype() != DType::Float32 || !shape_ok) {
    throw Error(fmt::format("{}: {} must be float32 {}, got {}", fn, name, shape,
                            t.defined() ? fmt::format("{} {}", dtype_name(t.dtype()), t.shape().str()) : "undefined"));
  }
}

template <typename Check> bool check_index_tensor(Check& c, const char* name, const Tensor& t, const char* expected) {
  if (t.defined() && t.dtype() == DType::Int64 && t.shape().rank() == 1) return true;
  const std::string got = t.defined() ? fmt::format("{} {}", dtype_name(t.dtype()), t.shape().str()) : "undefined";
  return fail(c, fmt::format("{} is {}, expected int64 {}", name, got, expected));
}

// Checks that `idx` lists distinct indices in [0,n), recording where each stands (-1: absent).
// `noun` names what an index denotes, for the violation.
template <typename Check>
bool locate_indices(Check& c, const char* name, const char* noun, const Tensor& idx, int64_t n, std::vector<int64_t>& at) {
  const int64_t* v = idx.data<int64_t>();
  at.assign(size_t(n), -1);
  for (int64_t k = 0; k < idx.numel(); ++k) {
    if (v[k] < 0 || v[k] >= n) return fail(c, fmt::format("{}[{}] = {} is not in [0, {})", name, k, v[k], n));
    int64_t& slot = at[size_t(v[k])];
    if (slot >= 0) {
      return fail(c, fmt::format("{0} {1} appears twice in {2} ({2}[{3}] and {2}[{4}])", noun, v[k], name, slot, k));
    }
    slot = k;
  }
  return true;
}

std::string box_str(int64_t i, float score) { return fmt::format("box {} (score {})", i, score); }

// The kept boxes gathered contiguously in keep order, for the O(N·K) scans.
struct Kept {
  std::vector<int64_t> index;
  std::vector<float> box, area, score;  // box is [K,4]

  Kept(const float* b, const float* s, const Tensor& keep) {
    const int64_t* k = keep.data<int64_t>();
    index.assign(k, k + keep.numel());
    for (const int64_t i : index) {
      box.insert(box.end(), b + i * 4, b + i * 4 + 4);
      area.push_back(nms_area(b, i));
      score.push_back(s[i]);
    }
  }
  int64_t size() const { return int64_t(index.size()); }
  const float* box_of(int64_t j) const { return box.data() + j * 4; }
};

bool check_kept_order(const Kept& kept, NmsCheck& c) {
  for (int64_t k = 1; k < kept.size(); ++k) {
    const float prev = kept.score[size_t(k - 1)], cur = kept.score[size_t(k)];
    if (above(cur, prev)) {
      return fail(c, fmt::format("{} is kept after {}, a lower score: kept boxes must be listed in decreasing score",
                                 box_str(kept.index[size_t(k)], cur), box_str(kept.index[size_t(k - 1)], prev)));
    }
    c.ties += same_rank(prev, cur);
  }
  return true;
}

// Every kept box survived the boxes kept before it. IoU arguments in the reference's order
// (the box visited first, first), so its IoUs are reproduced without relying on symmetry.
// With `grid` (built over the same boxes, empty), only pairs that share an x range are scored:
// exact for a threshold >= 0, since every other pair has IoU 0 or NaN, which is not above it.
// Candidates are visited in ascending order either way, so the counts and the first violation
// are the all-pairs scan's.
bool check_kept_pairs(const Kept& kept, double thr, double delta, NmsXGrid* grid, NmsCheck& c) {
  std::vector<int64_t> near;
  for (int64_t k = 0; k < kept.size(); ++k) {
    near.clear();
    if (grid) {
      // The grid holds kept positions [0, k): box_of(j) is kept.box_of's j-th box.
      grid->for_each_near(k, [&](int64_t j) { near.push_back(j); });
      std::sort(near.begin(), near.end());
      grid->add(k);
    } else {
      for (int64_t p = 0; p < k; ++p) near.push_back(p);
    }
    for (const int64_t p : near) {
      const double iou = nms_iou_pair(kept.box_of(p), kept.box_of(k), kept.area[size_t(p)], kept.area[size_t(k)]);
      if (!(iou > thr)) continue;
      if (iou > thr + delta) {
        return fail(c, fmt::format("{} is kept after {} though their IoU {} exceeds the threshold {}",
                                   box_str(kept.index[size_t(k)], kept.score[size_t(k)]),
                                   box_str(kept.index[size_t(p)], kept.score[size_t(p)]), float(iou), thr));
      }
      ++c.near_threshold;
    }
  }
  return true;
}

// How a suppressed box is explained by the best of the kept boxes that may have suppressed it.
struct Suppression {
  int freedoms = 3;  // tie + near of the best explanation; 3: none found
  bool tie = false, near = false;
  float largest_iou = NAN;  // over every candidate when none suppresses
};

// Candidates are kept[0, may): those of higher or equal score, the first `higher` of them higher.
// `candidates`: kept positions in ascending order, all below `may` (every kept box that may
// have suppressed the box, or only those sharing its x range: see check_suppressed).
Suppression find_suppressor(const Kept& kept, int64_t higher, const std::vector<int64_t>& candidates, const float* box,
                            float area, double thr, double delta) {
  Suppression best;
  for (size_t c = 0; c < candidates.size() && best.freedoms > 0; ++c) {
    const int64_t j = candidates[c];
    const float iou = nms_iou_pair(kept.box_of(j), box, kept.area[size_t(j)], area);
    if (std::isnan(best.largest_iou) || iou > best.largest_iou) best.largest_iou = iou;
    if (!(double(iou) > thr - delta)) continue;
    const bool tie = j >= higher, near = !(double(iou) > thr);
    if (int(tie) + int(near) < best.freedoms) best = {int(tie) + int(near), tie, near, best.largest_iou};
  }
  return best;
}

// With `grid` (over all boxes, holding the kept ones), only kept boxes sharing the box's x range
// are candidates: exact when thr - δ >= 0, since the others have IoU 0 or NaN. The largest IoU
// in the message then starts from 0, the IoU of the boxes skipped.
bool check_suppressed(const float* b, const float* s, int64_t n, const Kept& kept, const std::vector<int64_t>& at,
                      double thr, double delta, const NmsXGrid* grid, NmsCheck& c) {
  std::vector<int64_t> candidates;
  for (int64_t x = 0; x < n; ++x) {
    if (at[size_t(x)] >= 0) continue;
    // kept.score is in visiting order (checked), so the candidates form a prefix.
    const auto first = kept.score.begin();
    const int64_t higher = std::partition_point(first, kept.score.end(), [&](float v) { return above(v, s[x]); }) - first;
    const int64_t may = std::partition_point(first, kept.score.end(), [&](float v) { return !above(s[x], v); }) - first;
    candidates.clear();
    if (grid) {
      grid->for_each_near(x, [&](int64_t i) {
        if (at[size_t(i)] < may) candidates.push_back(at[size_t(i)]);
      });
      std::sort(candidates.begin(), candidates.end());
    } else {
      for (int64_t j = 0; j < may; ++j) candidates.push_back(j);
    }
    Suppression e = find_suppressor(kept, higher, candidates, b + x * 4, nms_area(b, x), thr, delta);
    if (grid && may > 0 && int64_t(candidates.size()) < may && !(e.largest_iou > 0)) e.largest_iou = 0;
    if (e.freedoms == 3) {
      return fail(c, may == 0 ? fmt::format("{} is not kept but no kept box has a higher or equal score", box_str(x, s[x]))
                              : fmt::format("{} is not kept but no kept box of higher or equal score overlaps it "
                                            "(largest IoU {}, threshold {})",
                                            box_str(x, s[x]), e.largest_iou, thr));
    }
    c.ties += e.tie;
    c.near_threshold += e.near;
  }
  return true;
}

}  // namespace

NmsCheck check_nms_keep(const Tensor& boxes, const Tensor& scores, double iou_threshold, const Tensor& keep, double delta,
                        bool all_pairs) {
  if (!(delta >= 0)) throw Error(fmt::format("check_nms_keep: delta must be >= 0, got {}", delta));
  require_float32("check_nms_keep", "scores", scores, scores.shape().rank() == 1, "[N]");
  const int64_t n = scores.numel();
  require_float32("check_nms_keep", "boxes", boxes, boxes.shape() == Shape{n, 4}, "[N,4], N the number of scores");
  NmsCheck c;
  std::vector<int64_t> at;
  if (!check_index_tensor(c, "keep", keep, "[K]") || !locate_indices(c, "keep", "box", keep, n, at)) return c;
  const float *b = boxes.data<float>(), *s = scores.data<float>();
  const Kept kept(b, s, keep);
  // The x-grid prefilter (the reference's, kernels/nms/nms.h) where it is exact; all pairs
  // otherwise (an infinite coordinate, a threshold - δ below 0) or when asked.
  std::optional<NmsXGrid> kept_grid, all_grid;
  if (!all_pairs) {
    kept_grid.emplace(kept.box.data(), kept.size());
    if (!kept_grid->usable() || !(iou_threshold >= 0)) kept_grid.reset();
    all_grid.emplace(b, n);
    if (all_grid->usable() && iou_threshold - delta >= 0) {
      for (const int64_t i : kept.index) all_grid->add(i);
    } else {
      all_grid.reset();
    }
  }
  if (check_kept_order(kept, c) && check_kept_pairs(kept, iou_threshold, delta, kept_grid ? &*kept_grid : nullptr, c)) {
    check_suppressed(b, s, n, kept, at, iou_threshold, delta, all_grid ? &*all_grid : nullptr, c);
  }
  return c;
}

NmsCheck check_nms_keep_by_class(const Tensor& boxes, const Tensor& scores, const Tensor& classes, double iou_threshold,
                                 const Tensor& keep, double delta) {
  require_float32("check_nms_keep_by_class", "scores", scores, scores.shape().rank() == 1, "[N]");
  const int64_t n = scores.numel();
  require_float32("check_nms_keep_by_class", "boxes", boxes, boxes.shape() == Shape{n, 4}, "[N,4], N the number of scores");
  if (!classes.defined() || classes.dtype() != DType::Int64 || classes.shape() != Shape{n}) {
    throw Error("check_nms_keep_by_class: classes must be int64 [N], N the number of scores");
  }
  NmsCheck c;
  std::vector<int64_t> at;
  if (!check_index_tensor(c, "keep", keep, "[K]") || !locate_indices(c, "keep", "box", keep, n, at)) return c;
  const float *b = boxes.data<float>(), *s = scores.data<float>();
  if (!check_kept_order(Kept(b, s, keep), c)) return c;
  c.ties = 0;  // counted class by class below
  const int64_t* cls = classes.data<int64_t>();
  std::map<int64_t, std::vector<int64_t>> members;  // class -> its boxes, ascending
  for (int64_t i = 0; i < n; ++i) members[cls[i]].push_back(i);
  const int64_t* k = keep.data<int64_t>();
  std::vector<int64_t> local(static_cast<size_t>(n));  // each box's place among its class's boxes
  for (const auto& [label, idx] : members) {
    const auto m = int64_t(idx.size());
    Tensor sub_boxes(DType::Float32, Shape{m, 4}), sub_scores(DType::Float32, Shape{m});
    std::vector<int64_t> sub_keep;
    for (int64_t j = 0; j < m; ++j) {
      const int64_t i = idx[size_t(j)];
      local[size_t(i)] = j;
      std::copy(b + i * 4, b + i * 4 + 4, sub_boxes.mutable_data<float>() + j * 4);
      sub_scores.mutable_data<float>()[j] = s[i];
    }
    for (int64_t q = 0; q < keep.numel(); ++q) {
      if (cls[k[q]] == label) sub_keep.push_back(local[size_t(k[q])]);
    }
    Tensor sub(DType::Int64, Shape{int64_t(sub_keep.size())});
    std::copy(sub_keep.begin(), sub_keep.end(), sub.mutable_data<int64_t>());
    const NmsCheck one = check_nms_keep(sub_boxes, sub_scores, iou_threshold, sub, delta);
    c.ties += one.ties, c.near_threshold += one.near_threshold;
    if (!one.valid) return fail(c, fmt::format("class {} (its boxes numbered among themselves): {}", label, one.violation)), c;
  }
  return c;
}

OrderCheck check_argsort(const Tensor& x, bool descending, const Tensor& order) {
  require_float32("check_argsort", "x", x, x.shape().rank() == 1, "[N]");
  const int64_t n = x.numel();
  OrderCheck c;
  std::vector<int64_t> at;
  if (!check_index_tensor(c, "order", order, "[N]")) return c;
  if (order.numel() != n) {
    fail(c, fmt::format("order has {} indices, x has {} elements", order.numel(), n));
    return c;
  }
  if (!locate_indices(c, "order", "index", order, n, at)) return c;
  const float* v = x.data<float>();
  const int64_t* o = order.data<int64_t>();
  for (int64_t k = 1; k < n; ++k) {
    const float prev = v[o[k - 1]], cur = v[o[k]];
    if (descending ? above(cur, prev) : above(prev, cur)) {
      fail(c, fmt::format("index {} (x = {}) comes after index {} (x = {}) in {} order", o[k], cur, o[k - 1], prev,
                          descending ? "descending" : "ascending"));
      return c;
    }
    c.ties += same_rank(prev, cur);
  }
  return c;
}

}  // namespace parity
