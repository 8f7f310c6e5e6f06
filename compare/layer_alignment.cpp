#include "compare/layer_alignment.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace parity {
namespace {

// The keys as small integers, equal where the strings are, so the diff compares integers.
std::pair<std::vector<int64_t>, std::vector<int64_t>> key_ids(const std::vector<AlignedLayer>& a, const std::vector<AlignedLayer>& b) {
  std::unordered_map<std::string, int64_t> ids;
  const auto of = [&](const std::vector<AlignedLayer>& side) {
    std::vector<int64_t> out;
    out.reserve(side.size());
    for (const AlignedLayer& l : side) out.push_back(ids.emplace(l.key, int64_t(ids.size())).first->second);
    return out;
  };
  auto ia = of(a);
  return {std::move(ia), of(b)};
}

// Myers' O((N+M)D) diff of ka[a0, a1) against kb[b0, b1): the matched positions go into `twin`.
// False, `twin` untouched, when more than max_edits insertions and deletions are needed.
bool diff_keys(const std::vector<int64_t>& ka, const std::vector<int64_t>& kb, int64_t a0, int64_t a1, int64_t b0, int64_t b1,
               int64_t max_edits, std::vector<int64_t>& twin) {
  const int64_t n = a1 - a0, m = b1 - b0, most = std::min(n + m, max_edits);
  const int64_t off = most + 1;
  std::vector<int64_t> v(size_t(2 * most + 3), 0);
  // trace[d]: v at the start of step d, for diagonals -d..d: enough to walk the path back.
  std::vector<std::vector<int64_t>> trace;
  const auto same = [&](int64_t x, int64_t y) { return ka[size_t(a0 + x)] == kb[size_t(b0 + y)]; };
  for (int64_t d = 0; d <= most; ++d) {
    trace.emplace_back(v.begin() + (off - d), v.begin() + (off + d + 1));
    for (int64_t k = -d; k <= d; k += 2) {
      int64_t x = (k == -d || (k != d && v[size_t(off + k - 1)] < v[size_t(off + k + 1)])) ? v[size_t(off + k + 1)]
                                                                                              : v[size_t(off + k - 1)] + 1;
      int64_t y = x - k;
      while (x < n && y < m && same(x, y)) ++x, ++y;
      v[size_t(off + k)] = x;
      if (x < n || y < m) continue;
      // Walk back from the end, one edit per step, marking each diagonal run as pairs.
      const auto pair_back = [&](int64_t to_x, int64_t to_y) {
        for (; x > to_x && y > to_y; --x, --y) twin[size_t(a0 + x - 1)] = b0 + y - 1;
      };
      for (int64_t e = d; e > 0; --e) {
        const std::vector<int64_t>& t = trace[size_t(e)];
        const auto at = [&](int64_t kk) { return t[size_t(kk + e)]; };
        const int64_t kk = x - y;
        const int64_t prev_k = (kk == -e || (kk != e && at(kk - 1) < at(kk + 1))) ? kk + 1 : kk - 1;
        const int64_t prev_x = at(prev_k), prev_y = prev_x - prev_k;
        pair_back(prev_x, prev_y);
        x = prev_x, y = prev_y;
      }
      pair_back(0, 0);
      return true;
    }
  }
  return false;
}

// Layers of A and of B left unpaired between two pairs (or the ends) pair by name, in order.
void pair_gaps_by_name(const std::vector<AlignedLayer>& a, const std::vector<AlignedLayer>& b, std::vector<int64_t>& twin) {
  int64_t ia = 0, ib = 0;  // the gap starts here on each side
  const int64_t n = int64_t(a.size()), m = int64_t(b.size());
  while (ia < n || ib < m) {
    int64_t ea = ia;
    while (ea < n && twin[size_t(ea)] < 0) ++ea;
    const int64_t eb = ea < n ? twin[size_t(ea)] : m;
    std::map<std::string, std::vector<int64_t>> in_gap;
    for (int64_t j = ib; j < eb; ++j) in_gap[b[size_t(j)].name].push_back(j);
    int64_t floor = ib;  // B layers before this one are paired or passed over
    for (int64_t i = ia; i < ea && !in_gap.empty(); ++i) {
      const auto it = in_gap.find(a[size_t(i)].name);
      if (it == in_gap.end()) continue;
      const auto j = std::lower_bound(it->second.begin(), it->second.end(), floor);
      if (j == it->second.end()) continue;
      twin[size_t(i)] = *j;
      floor = *j + 1;
    }
    ia = ea + 1, ib = eb + 1;
  }
}

// Layers still unpaired that have the same key and the same name on both sides pair, k-th with
// k-th, in whatever order each side ran them: calls the model code runs in another order (a
// branch computed before another) are still the same calls.
void pair_reordered(const std::vector<AlignedLayer>& a, const std::vector<AlignedLayer>& b, std::vector<int64_t>& twin) {
  std::vector<char> b_paired(b.size(), 0);
  for (const int64_t j : twin) {
    if (j >= 0) b_paired[size_t(j)] = 1;
  }
  std::map<std::pair<std::string, std::string>, std::vector<int64_t>> unpaired_b;
  for (size_t j = b.size(); j-- > 0;) {
    if (!b_paired[j]) unpaired_b[{b[j].key, b[j].name}].push_back(int64_t(j));  // last first: pop_back takes the first
  }
  for (size_t i = 0; i < a.size() && !unpaired_b.empty(); ++i) {
    if (twin[i] >= 0) continue;
    const auto it = unpaired_b.find({a[i].key, a[i].name});
    if (it == unpaired_b.end()) continue;
    twin[i] = it->second.back();
    it->second.pop_back();
    if (it->second.empty()) unpaired_b.erase(it);
  }
}

}  // namespace

std::vector<int64_t> align_layers(const std::vector<AlignedLayer>& a, const std::vector<AlignedLayer>& b, int64_t max_edits) {
  const auto [ka, kb] = key_ids(a, b);
  const int64_t n = int64_t(a.size()), m = int64_t(b.size());
  std::vector<int64_t> twin(a.size(), -1);
  int64_t lo = 0, hi_a = n, hi_b = m;
  for (; lo < n && lo < m && ka[size_t(lo)] == kb[size_t(lo)]; ++lo) twin[size_t(lo)] = lo;
  for (; hi_a > lo && hi_b > lo && ka[size_t(hi_a - 1)] == kb[size_t(hi_b - 1)]; --hi_a, --hi_b) twin[size_t(hi_a - 1)] = hi_b - 1;
  diff_keys(ka, kb, lo, hi_a, lo, hi_b, max_edits, twin);  // when it gives up, the middle pairs by name alone
  pair_gaps_by_name(a, b, twin);
  pair_reordered(a, b, twin);
  return twin;
}

}  // namespace parity
