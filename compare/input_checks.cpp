#include "compare/input_checks.h"

#include <algorithm>
#include <array>
#include <set>
#include <string>

#include "compare/layer_alignment.h"
#include "compare/layer_sides.h"
#include "compare/tolerance.h"
#include "compare/view_chain.h"

namespace parity {

std::string InputChecks::given_input_difference(const DumpLayer& la, const DumpLayer& lb, std::vector<std::string>& rounded) const {
  // At the precision either side's kernel ran at, at least: a reduced-precision block of a float32
  // model takes its weights rounded.
  const Precision precision = coarser(coarser(precision_, computed_in(la)), computed_in(lb));
  for (const DumpTensorInfo& a_in : la.inputs) {
    const DumpTensorInfo* b_in = lb.input_named(a_in.role);
    if (!b_in) continue;
    const DumpTensorInfo &ta = excuses_.through_casts(p_, 0, a_in), &tb = excuses_.through_casts(p_, 1, *b_in);
    if (!ta.source.empty() || !tb.source.empty()) continue;  // a layer produced it
    if (ta.dtype == tb.dtype && ta.shape == tb.shape && p_.a.hash_of(ta) == p_.b.hash_of(tb)) continue;
    if (rounded_by_precision(ta, tb, precision)) {
      rounded.push_back(a_in.role);
      continue;
    }
    return "input " + a_in.role + " differs and no layer produced it";
  }
  return "";
}

// Under a reduced precision (--precision fp16, bf16, tf32), a reduced-precision run takes the
// image and the weights rounded to it: a given input whose one side is the other's value rounded
// so, element for element.
bool InputChecks::rounded_by_precision(const DumpTensorInfo& ta, const DumpTensorInfo& tb, Precision precision) const {
  if (precision == Precision::Fp32 || ta.shape != tb.shape || !narrow_float(ta) || !narrow_float(tb)) return false;
  const Tensor x = p_.a.view(ta), y = p_.b.view(tb);
  // Which side is the coarse one is the data's to say: try each.
  if (is_rounded(x, y, precision) || is_rounded(y, x, precision)) return true;
  return runs_[0] && runs_[1] && is_half(*runs_[0]) && is_half(*runs_[1]) && runs_[0] != runs_[1] &&
         is_co_rounded(x, *runs_[0], y, *runs_[1]);
}

std::string InputChecks::rewired_input(const DumpLayer& la, const DumpLayer& lb) const {
  for (size_t k = 0; k < la.inputs.size() && k < lb.inputs.size(); ++k) {
    const DumpTensorInfo &ea = excuses_.through_casts(p_, 0, la.inputs[k]), &eb = excuses_.through_casts(p_, 1, lb.inputs[k]);
    const std::string &sa = ea.source, &sb = eb.source;
    const int64_t la_src = ea.source_layer, lb_src = eb.source_layer;
    const std::string& role_k = la.inputs[k].role;
    // One side's input computed by layers the other side lacks, giving what that side took
    // as data given (a grid it had cached): the same data, not another wiring.
    if (excuses_.recomputed_here(0, la_src) || excuses_.recomputed_here(1, lb_src)) continue;
    if (sa.empty() != sb.empty()) {
      const auto from = [](const std::string& source) { return source.empty() ? std::string("no layer (data given)") : source; };
      return "input " + role_k + " comes from another layer: A reads " + from(sa) + ", B reads " + from(sb);
    }
    if (la_src < 0 || lb_src < 0) continue;
    const int64_t pa = p_.twin(0, la_src);
    if (pa < 0 || p_.twin(1, lb_src) < 0) continue;  // a producer the other dump lacks: no telling
    const auto role = [](const std::string& source) { return source.substr(source.rfind(':') + 1); };
    if (pa != lb_src || role(sa) != role(sb)) return "input " + role_k + " comes from another layer: A reads " + sa + ", B reads " + sb;
  }
  return "";
}

std::string InputChecks::copy_finding(int side, const DumpLayer& l) const {
  for (const DumpTensorInfo& t : l.inputs) {
    if (!t.derived || !t.has_via) continue;
    const DumpTensorInfo* out = p_.side(side).source_of(t);
    if (!out) continue;
    const ViaCheck c = check_via(p_.side(side).load(*out), p_.side(side).load(t), t.via);
    if (c.checked && !c.mismatch.empty()) {
      // An empty chain: the output itself, whose values changed with no recorded call writing
      // into it (a kernel wrote where it should not have, or a call parity passes through did).
      const std::string how = t.via.empty() ? " as that layer gave it, though no recorded call wrote into it since" : " through " + via_text(t.via);
      return std::string(side == 0 ? "A" : "B") + "'s input " + t.role + " is not " + t.source + how + ": " + c.mismatch;
    }
  }
  return "";
}

namespace {
// What a slice bound of a view of each side's producer is clamped to: 0 and its sizes.
std::array<std::set<std::string>, 2> clamps_of(const DumpTensorInfo& pa, const DumpTensorInfo& pb) {
  std::array<std::set<std::string>, 2> c;
  for (int side = 0; side < 2; ++side) {
    c[size_t(side)] = {"0"};
    for (const int64_t n : (side == 0 ? pa : pb).shape) c[size_t(side)].insert(std::to_string(n));
  }
  return c;
}
}  // namespace

// Inputs that are their producer's output as is agree whenever the producer does; derived ones
// are compared under copy_tolerance.
std::string InputChecks::inconsistent_input(const DumpLayer& la, const DumpLayer& lb, const DataFlow& flow) const {
  for (size_t k = 0; k < la.inputs.size() && k < lb.inputs.size(); ++k) {
    const DumpTensorInfo &ta = la.inputs[k], &tb = lb.inputs[k];
    if (!ta.derived && !tb.derived) continue;
    if (ta.source_layer < 0 || tb.source_layer < 0 || p_.twin(0, ta.source_layer) != tb.source_layer) continue;
    if (ta.has_via && tb.has_via) {
      // Each side's copy is checked against its own producer (copy_finding); what is left to
      // compare is which elements the two chains take, and where they put them, whatever the
      // producer's values.
      const DumpTensorInfo *pa = p_.a.source_of(ta), *pb = p_.b.source_of(tb);
      if (!pa || !pb || pa->shape != pb->shape) continue;
      // A view indexed by tensors the run computed (`m[t0:t1]`, Mask R-CNN's crop at a box's
      // corners), written alike on both sides, takes the elements its data says: once the runs'
      // data have parted where control flow follows it, others. Any other difference in the
      // chain is the model code.
      if (flow.steered_so_far() && (indexed_by_data(ta.via) || indexed_by_data(tb.via)) &&
          same_but_tensor_values(via_text(ta.via), via_text(tb.via), clamps_of(*pa, *pb))) {
        continue;
      }
      if (flow.steered_so_far() && flow.numbers_read_into_python(via_text(ta.via), via_text(tb.via))) continue;
      const std::vector<int64_t> from_a = via_sources(pa->shape, ta.via), from_b = via_sources(pb->shape, tb.via);
      if (from_a.empty() || from_b.empty() || (from_a == from_b && ta.shape == tb.shape)) continue;
      return "input " + ta.role + " takes other elements of " + ta.source + ": A through " + via_text(ta.via) + ", B through " +
             via_text(tb.via) + ": the view or copy between them differs (the model code)";
    }
    // One side's chain, checked against its own producer, takes every element in place (a cast,
    // x.bfloat16() in a reduced-precision block), the other side's input is that producer's output
    // as is: the same elements, one of them rounded.
    const bool a_whole = ta.has_via && !tb.derived, b_whole = tb.has_via && !ta.derived;
    if (a_whole || b_whole) {
      const DumpTensorInfo* p = p_.side(a_whole ? 0 : 1).source_of(a_whole ? ta : tb);
      const std::vector<ViaStep>& via = a_whole ? ta.via : tb.via;
      if (p && p->shape == ta.shape && p->shape == tb.shape) {
        const std::vector<int64_t> from = via_sources(p->shape, via);
        bool in_place = !from.empty();
        for (size_t i = 0; i < from.size() && in_place; ++i) in_place = from[i] == int64_t(i);
        if (in_place) continue;
      }
    }
    if (flow.differs(0, ta.source_layer) || flow.differs(1, tb.source_layer)) continue;
    // Where a partial in-place write by the source did not reach, the input holds what its storage
    // held before: other layers' outputs, which may differ by rounding where the source agrees.
    const auto differs_any = [&](int side, const std::vector<int64_t>& layers) {
      return std::any_of(layers.begin(), layers.end(), [&](int64_t l) { return l < 0 || flow.differs(side, l); });
    };
    if (differs_any(0, ta.also_from_layers) || differs_any(1, tb.also_from_layers)) continue;
    const std::string what = "input " + ta.role + " differs though its producer " + ta.source + " agrees";
    if (ta.dtype != tb.dtype || ta.shape != tb.shape) {
      return what + " (A " + ta.dtype + " " + Shape(ta.shape).str() + ", B " + tb.dtype + " " + Shape(tb.shape).str() +
             "): the view or copy between them differs (the model code)";
    }
    if (p_.a.hash_of(ta) == p_.b.hash_of(tb)) continue;
    const Tensor x = p_.a.load(ta), y = p_.b.load(tb);
    const TensorDiff d = compare_tensors(x, y, copy_tolerance(x.dtype(), precision_profile(precision_)));
    if (d.state == State::Failed) return what + ": " + d.reason + ": the view or copy between them differs (the model code)";
  }
  return "";
}

// Recorded hashes of one algorithm that differ answer no without reading: were they lying, the
// judge would only run twice on the same bytes, which gives the same verdict (and check_owed
// finds the lie). A yes comes from hashes of the bytes.
bool InputChecks::same_input_bytes(const DumpLayer& la, const DumpLayer& lb) const {
  if (la.inputs.empty() || la.inputs.size() != lb.inputs.size()) return false;
  for (size_t k = 0; k < la.inputs.size(); ++k) {
    const DumpTensorInfo &ta = la.inputs[k], &tb = lb.inputs[k];
    if (ta.role != tb.role || ta.dtype != tb.dtype || ta.shape != tb.shape) return false;
    if (!ta.hash.empty() && !tb.hash.empty() && !Dump::legacy_hash(ta) && !Dump::legacy_hash(tb) && ta.hash != tb.hash) return false;
  }
  for (size_t k = 0; k < la.inputs.size(); ++k) {
    if (p_.a.hash_of(la.inputs[k]) != p_.b.hash_of(lb.inputs[k])) return false;
  }
  return true;
}

}  // namespace parity
