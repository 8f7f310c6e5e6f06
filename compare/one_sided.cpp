#include "compare/one_sided.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "compare/output_streams.h"
#include "compare/tolerance.h"
#include "kernels/torch_calls.h"

namespace parity {

namespace {

using Consumers = std::vector<std::vector<std::pair<int64_t, size_t>>>;  // per layer: (consumer, its input k)

// A cast that one run has and the other lacks (`.half()` of the image, `.to(float16)` before a
// head, `.float()` after it), in a comparison at a reduced precision: its output is its input
// as is, or rounded to that precision. That is the run's precision changing, not another
// model; "" when the layer is not such a cast.
std::string precision_cast(const DumpPair& p, int side, const DumpLayer& l, Precision precision) {
  const TorchCall* cast = torch_call(l.op);
  if (precision == Precision::Fp32 || !cast || !cast->cast || l.inputs.size() != 1 || l.outputs.size() != 1) return "";
  const DumpTensorInfo &in = l.inputs[0], &out = l.outputs[0];
  if (in.shape != out.shape || !narrow_float(in) || !narrow_float(out)) return "";
  const Tensor x = p.side(side).view(in), y = p.side(side).view(out);
  if (!is_rounded(x, y, precision)) return "";
  return std::string("a cast in ") + (side == 0 ? "A" : "B") + "'s run only, which keeps its values or rounds them to " +
         precision_profile(precision).name + ": the run's precision, not another model";
}

// Following the outputs of one side's unpaired layer i through the unpaired layers they feed:
// "<layer> <input>" of the first paired layer reached, when every paired layer reached takes
// values its twin on the other side also took (same_values: copies of agreeing data stay within
// it); when none is reached, a note that the values went into Python numbers, if every unpaired
// layer reached that nothing reads had its output read so (`to_python`: a scale
// MultiScaleRoIAlign works out on its first call and keeps; what such numbers change shows in the
// calls after them); "" otherwise (an unused tensor is not known to be harmless: a model's own
// output is one).
std::string recomputed_as_used(const DumpPair& p, int side, int64_t i, const Consumers& consumers, Precision precision) {
  const Dump& d = p.side(side);
  std::vector<int64_t> todo{i};
  std::set<int64_t> seen{i};
  std::string reached;
  // Every unread layer reached had an output read as a Python number, and the layers reached
  // read only layers the other run lacks too (factories: torch.tensor(scale), its log2): a value
  // a module works out and keeps, not a result computed from the model's data.
  bool into_python = true;
  while (!todo.empty()) {
    const int64_t u = todo.back();
    todo.pop_back();
    if (consumers[size_t(u)].empty()) {
      const std::vector<DumpTensorInfo>& outs = d.layers[size_t(u)].outputs;
      into_python = into_python && std::any_of(outs.begin(), outs.end(), [](const DumpTensorInfo& o) { return o.to_python; });
    }
    for (const DumpTensorInfo& t : d.layers[size_t(u)].inputs) {
      into_python = into_python && t.source_layer >= 0 && p.twin(side, t.source_layer) < 0;
    }
    for (const auto& [j, k] : consumers[size_t(u)]) {
      const DumpLayer& l = d.layers[size_t(j)];
      const int64_t twin = p.twin(side, j);
      if (twin < 0) {
        if (seen.insert(j).second) todo.push_back(j);
        if (seen.size() > 64) return "";  // a long computation of its own is not a cached value
        continue;
      }
      const DumpTensorInfo* used = p.side(1 - side).layers[size_t(twin)].input_named(l.inputs[k].role);
      if (!used || !same_values(p, side, l.inputs[k], *used, precision)) return "";
      if (reached.empty()) reached = l.name + " " + l.inputs[k].role;
    }
  }
  const std::string other_side = side == 0 ? "B" : "A";
  if (!reached.empty()) return "computed in this run only, and what it gives is what " + other_side + " used: " + reached;
  if (into_python) return "computed in this run only, into Python numbers no layer reads (a value a module works out once and keeps)";
  return "";
}

}  // namespace

bool narrow_float(const DumpTensorInfo& t) {
  const std::optional<DType> d = dtype_from_name(t.dtype);
  return d && (*d == DType::Float32 || *d == DType::Float16);
}

bool same_values(const DumpPair& p, int side, const DumpTensorInfo& t, const DumpTensorInfo& u, Precision precision) {
  if (t.shape != u.shape) return false;
  if (t.dtype == u.dtype && p.side(side).hash_of(t) == p.side(1 - side).hash_of(u)) return true;
  const Tensor x = p.side(side).load(t), y = p.side(1 - side).load(u);
  if (!is_floating(x.dtype()) || !is_floating(y.dtype())) return false;
  // A float64 run dumped as float64 against a float32 one: compared widened, at the narrower's tolerance.
  const Comparable c = comparable(x, y);
  return compare_tensors(c.x, c.y, copy_tolerance(c.dtype, precision_profile(precision))).state != State::Failed;
}

const DumpTensorInfo& OneSidedExcuses::through_casts(const DumpPair& p, int side, const DumpTensorInfo& t) const {
  const DumpTensorInfo* cur = &t;
  while (cur->source_layer >= 0 && casts[side].count(cur->source_layer)) {
    cur = &p.side(side).layers[size_t(cur->source_layer)].inputs[0];
  }
  return *cur;
}

OneSidedExcuses excuse_one_sided(const DumpPair& p, Precision precision) {
  OneSidedExcuses e;
  // Casts first: a value excused as recomputed is never one.
  for (int side = 0; side < 2; ++side) {
    const Dump& d = p.side(side);
    for (size_t i = 0; i < d.layers.size(); ++i) {
      if (p.twin(side, int64_t(i)) >= 0) continue;
      if (std::string why = precision_cast(p, side, d.layers[i], precision); !why.empty()) e.casts[side][int64_t(i)] = std::move(why);
    }
  }
  for (int side = 0; side < 2; ++side) {
    const Dump& d = p.side(side);
    Consumers consumers(d.layers.size());
    for (size_t j = 0; j < d.layers.size(); ++j) {
      const std::vector<DumpTensorInfo>& in = d.layers[j].inputs;
      for (size_t k = 0; k < in.size(); ++k) {
        if (in[k].source_layer >= 0) consumers[size_t(in[k].source_layer)].push_back({int64_t(j), k});
      }
    }
    for (size_t i = 0; i < d.layers.size(); ++i) {
      if (p.twin(side, int64_t(i)) >= 0 || e.casts[side].count(int64_t(i))) continue;
      if (std::string where = recomputed_as_used(p, side, int64_t(i), consumers, precision); !where.empty()) {
        e.recomputed[side][int64_t(i)] = std::move(where);
      }
    }
  }
  return e;
}

}  // namespace parity
