#include "compare/dump_compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include "compare/layer_alignment.h"
#include "compare/tolerance.h"
#include "core/error.h"
#include "core/half.h"
#include "core/mapped_file.h"
#include "core/stats.h"
#include "core/stopwatch.h"
#include "core/thread_pool.h"
#include "kernels/backend.h"
#include "kernels/torch_calls.h"

namespace parity {

std::string LayerReport::verdict_word() const { return propagated() ? "PROPAGATED" : state_name(state); }

std::string LayerReport::note() const {
  if (origin) {
    const std::string side = defective == Sides::None ? "" : std::string(" (defective: ") + sides_name(defective) + ")";
    return "origin" + side + ": " + reason;
  }
  if (propagated()) {
    // What PROPAGATED means is said once, under the table: the row names its origin and what differs.
    const std::string& said_once = kMatchesOnOwnInputs;
    const bool plain = reason.rfind(said_once, 0) == 0;
    return "from " + propagated_from + (reason.empty() ? "" : ": " + (plain ? reason.substr(said_once.size()) : reason));
  }
  return reason;
}

namespace {

// A PyTorch factory (torch.zeros(4, 3), arange) takes no tensor: its inputs are all recorded, none.
bool takes_no_tensor(const DumpLayer& l) {
  static const std::regex tensor_field(R"((^| )in[0-9]+(_[0-9]+)?=)");
  return l.inputs.empty() && l.op.rfind("torch.", 0) == 0 && !std::regex_search(l.line, tensor_field);
}

}  // namespace

LayerSide layer_side(const Dump& d, const DumpLayer& l) {
  LayerSide s;
  s.line = l.line, s.call = l.call;
  for (const DumpTensorInfo& t : l.outputs) {
    s.roles.push_back(t.role);
    s.outputs.push_back(d.load(t));
    s.hashes.push_back(d.hash_of(t));
  }
  if (!l.inputs.empty() || takes_no_tensor(l)) {
    s.inputs = [&d, &l] {
      std::vector<Tensor> in;
      for (const DumpTensorInfo& t : l.inputs) in.push_back(d.load(t));
      return in;
    };
  }
  return s;
}

namespace {

constexpr std::ptrdiff_t kReleaseEvery = std::ptrdiff_t(16) << 20;

// An output read in place from the mapping `view` holds, not copied: a piece is hashed and
// compared while it is in the cache, and the page cache's large folios map in few faults (reading
// a 50 MiB dump file: 11 to 18 GB/s mapped, 6 to 9 GB/s by pread into a 1 MiB buffer, this
// project's VM, Linux 6.18). What is read is let go of as the stream moves on
// (release_read_pages), so a side holds a few MiB of its file, not the tensor.
StoredOutput stored_output(const Dump& d, const DumpTensorInfo& t, const Tensor& view) {
  auto kept_from = std::make_shared<const std::byte*>(view.bytes());
  const auto read = [view, kept_from](size_t offset, size_t) {
    const std::byte* at = view.bytes() + offset;
    if (at - *kept_from >= kReleaseEvery) *kept_from = release_read_pages(*kept_from, at);
    return at;
  };
  return StoredOutput{read, [&d, &t](const std::string& hash) { d.check_hash(t, hash); }, [&d, &t] { return d.load(t); }};
}

// How a side's output is read. Element-wise pass: recorded hashes that differ say the bytes will
// be compared: float outputs of one dtype and shape are streamed by the judge (each byte read
// once, in place from a mapping of the file, hashed as it passes); outputs of another shape
// differ in structure, which the pass sees without reading them (two float dtypes of one shape
// are compared, widened; the local checks read them whole). A local check streams a float
// output against the judge's (each side on its own). Other outputs are read whole once where
// their bytes differ; otherwise both are hashed first, and read only if they differ after all
// (a manifest that lies), the same bytes only mapped, for the few elements the mistrust scan
// reads. Either way identity comes from hashes of the bytes.
enum class Reading { Streamed, Unread, Other };

// `recorded_differ`: both outputs have recorded hashes of the current algorithm, and they differ.
Reading reading_of(const DumpTensorInfo& t, const DumpTensorInfo& ta, const DumpTensorInfo& tb, bool stream, bool recorded_differ) {
  const std::optional<DType> dtype = dtype_from_name(t.dtype);
  const bool floats = dtype && is_floating(*dtype);
  if (!stream) return floats && !Dump::legacy_hash(t) ? Reading::Streamed : Reading::Other;
  if (!recorded_differ) return Reading::Other;
  if (ta.shape != tb.shape) return Reading::Unread;
  return floats && ta.dtype == tb.dtype ? Reading::Streamed : Reading::Other;
}

// Output k (`t` of dump `d`) onto `side`, read as `how`; `differs()`: whether its bytes differ
// from the other side's (asked only where that decides whether it is read whole).
void add_output(const Dump& d, const DumpTensorInfo& t, size_t k, Reading how, const std::function<bool()>& differs, LayerSide& side) {
  side.roles.push_back(t.role);
  switch (how) {
    case Reading::Unread:
      side.outputs.push_back(d.view_checked_later(t, false));
      side.hashes.emplace_back();  // not needed: they cannot be identical
      break;
    case Reading::Streamed:
      side.outputs.push_back(d.unchecked_view(t));
      side.hashes.emplace_back();  // computed as the judge streams it
      side.stored.resize(k + 1);
      side.stored[k] = stored_output(d, t, side.outputs.back());
      break;
    case Reading::Other:
      side.outputs.push_back(differs() ? d.load(t) : d.view(t));
      side.hashes.push_back(d.hash_of(t));
      break;
  }
}

// Inputs: the element-wise pass reads some of their elements (conv2d's bound and statistical
// test), through a mapping with every page mapped at once (no copy, no fresh memory, no fault
// per page), their bytes checked once the pass is over (Dump::check_owed); a local check runs
// the judge over all of them, read whole.
void add_inputs(const Dump& d, const DumpLayer& l, bool stream, LayerSide& side) {
  if (l.inputs.empty() && !takes_no_tensor(l)) return;
  side.inputs = [&d, &l, stream] {
    std::vector<Tensor> in;
    for (const DumpTensorInfo& t : l.inputs) in.push_back(stream ? d.view_checked_later(t, true) : d.view(t));
    return in;
  };
}

}  // namespace

std::pair<LayerSide, LayerSide> layer_sides(const Dump& a, const DumpLayer& la, const Dump& b, const DumpLayer& lb, bool stream) {
  std::pair<LayerSide, LayerSide> s;
  s.first.line = la.line, s.second.line = lb.line;
  s.first.call = la.call, s.second.call = lb.call;
  for (size_t k = 0; k < std::max(la.outputs.size(), lb.outputs.size()); ++k) {
    const DumpTensorInfo* ta = k < la.outputs.size() ? &la.outputs[k] : nullptr;
    const DumpTensorInfo* tb = k < lb.outputs.size() ? &lb.outputs[k] : nullptr;
    // Recorded hashes that differ; of the current algorithm, they also say how to read.
    const bool hashes_differ = ta && tb && !ta->hash.empty() && !tb->hash.empty() && ta->hash != tb->hash;
    const bool recorded_differ = hashes_differ && !Dump::legacy_hash(*ta) && !Dump::legacy_hash(*tb);
    const auto differs = [&] { return hashes_differ || (ta && tb && a.hash_of(*ta) != b.hash_of(*tb)); };
    for (auto [d, t, side] : {std::tuple{&a, ta, &s.first}, std::tuple{&b, tb, &s.second}}) {
      if (!t) continue;
      // reading_of reads the other side's fields only where both are present (recorded_differ).
      add_output(*d, *t, k, reading_of(*t, ta ? *ta : *t, tb ? *tb : *t, stream, recorded_differ), differs, *side);
    }
  }
  add_inputs(a, la, stream, s.first);
  add_inputs(b, lb, stream, s.second);
  return s;
}

namespace {

// Whether a field of an unknown op's line says where or how a tensor is placed, not what is
// computed: its device (as a keyword, or a positional `.to(device)`), its memory layout, pinning,
// whether autograd follows it. Two runs of one model on the CPU and on a GPU differ in these.
bool placement_field(const std::string& key, const std::string& value) {
  if (placement_argument(key)) return true;
  if (value.rfind("device(", 0) == 0) return true;
  static const std::regex device_text(R"(^['"](cpu|cuda|mps|xpu|meta)(:[0-9]+)?['"]$)");
  return std::regex_match(value, device_text);
}

// A floating dtype argument (`dtype=`, or a positional `.to(torch.float16)`) names the run's
// precision, not the call: a float64 or float16 run and a float32 one run the same model. Every
// floating dtype reads as one word; an integer or bool dtype stays itself.
std::string dtype_identity(const std::string& value) {
  static const std::regex floating(R"(^torch\.(float(16|32|64)?|half|double|bfloat16)$)");
  return std::regex_match(value, floating) ? "floating" : value;
}

// A call's identity: a known op's canonical line; for an op parity does not know, its words with
// the fields sorted, one space apart (another tool may write the same call's fields in any order
// and spacing), without the fields that place tensors (placement_field), and with any floating
// dtype as one word (dtype_identity); a known op's line without its precision= (a half run's op
// that one backend ran in float32 for want of a half kernel). Two correct runs on two devices or
// in two precisions name the same calls.
std::string canonical_call(const std::string& line) {
  if (is_known_op(op_name_of(line))) return with_half(canonical_line(line), HalfType::None);
  std::istringstream in(line);
  std::string op, word;
  in >> op;
  std::vector<std::string> fields;
  while (in >> word) {
    const size_t eq = word.find('=');
    const std::string key = word.substr(0, eq), value = eq == std::string::npos ? "" : word.substr(eq + 1);
    if (placement_field(key, value)) continue;
    fields.push_back(eq == std::string::npos ? word : key + "=" + dtype_identity(value));
  }
  std::sort(fields.begin(), fields.end());
  for (const std::string& f : fields) op += " " + f;
  return op;
}

// key -> value of a line's fields (flags map to ""; the op to the key "").
std::map<std::string, std::string> fields_of(const std::string& line) {
  std::map<std::string, std::string> f;
  std::istringstream in(line);
  std::string word;
  in >> f[""];
  while (in >> word) {
    const size_t eq = word.find('=');
    f[word.substr(0, eq)] = eq == std::string::npos ? "" : word.substr(eq + 1);
  }
  return f;
}

// Two canonical lines that differ only in their numbers: each run of digits read as one mark.
bool only_numbers_differ(const std::string& ca, const std::string& cb) {
  static const std::regex digits("[0-9]+");
  return std::regex_replace(ca, digits, "#") == std::regex_replace(cb, digits, "#");
}

// The same op with the same fields, whatever their values.
bool same_fields(const std::string& ca, const std::string& cb) {
  if (ca == cb) return true;
  if (ca.substr(0, ca.find(' ')) != cb.substr(0, cb.find(' '))) return false;
  const auto fa = fields_of(ca), fb = fields_of(cb);
  if (fa.size() != fb.size()) return false;
  for (auto ia = fa.begin(), ib = fb.begin(); ia != fa.end(); ++ia, ++ib) {
    if (ia->first != ib->first) return false;
  }
  return true;
}

// A call without the fields that give its input tensors' shapes: what it computes, whatever
// the data made of the shapes (a per-class loop keeps another number of boxes on each side).
// A field is a shape when its key is an input's role (`in1`, `x` for cat's `x0`, `x1`...) or its
// value reads as one (`2x3`, `1x2,1x3`, `scalar`).
std::string call_without_shapes(const DumpLayer& l, const std::string& canonical) {
  static const std::regex shape(R"(^(scalar|[0-9]+(x[0-9]+)+)(,(scalar|[0-9]+(x[0-9]+)*))*$)");
  const auto is_role = [&](const std::string& key) {
    for (const DumpTensorInfo& t : l.inputs) {
      if (t.role == key || (t.role.rfind(key, 0) == 0 && t.role.find_first_not_of("0123456789_", key.size()) == std::string::npos)) {
        return true;
      }
    }
    return false;
  };
  std::istringstream in(canonical);
  std::string word, out;
  in >> out;
  while (in >> word) {
    const size_t eq = word.find('=');
    if (eq != std::string::npos && (is_role(word.substr(0, eq)) || std::regex_match(word.substr(eq + 1), shape))) continue;
    out += " " + word;
  }
  return out;
}

// What alignment pairs a layer by: its op, its name without the counter that numbers calls of
// one kind in a scope ("model.24.mul.5" is model.24's sixth mul: another call before it shifts
// the count), and its call without its input shapes (call_without_shapes). `canonical`: each
// layer's canonical_call.
std::vector<AlignedLayer> alignment_of(const Dump& d, const std::vector<std::string>& canonical) {
  static const std::regex counter(R"(\.[0-9]+$)");
  std::vector<AlignedLayer> out;
  out.reserve(d.layers.size());
  for (size_t i = 0; i < d.layers.size(); ++i) {
    const DumpLayer& l = d.layers[i];
    out.push_back({l.op + '\n' + std::regex_replace(l.name, counter, "") + '\n' + call_without_shapes(l, canonical[i]), l.name});
  }
  return out;
}

// Each layer's canonical_call, once for the whole comparison (a known op's from the call its
// manifest was read with).
std::vector<std::string> canonical_calls(const Dump& d) {
  std::vector<std::string> out;
  out.reserve(d.layers.size());
  for (const DumpLayer& l : d.layers) out.push_back(l.call ? with_half(l.call->line(), HalfType::None) : canonical_call(l.line));
  return out;
}

const DumpTensorInfo* input_named(const DumpLayer& l, const std::string& role) {
  for (const DumpTensorInfo& t : l.inputs) {
    if (t.role == role) return &t;
  }
  return nullptr;
}

// The first three of `names` and ", ..." when there are more: a header line's examples.
std::string first_names(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < 3; ++i) s += (i ? ", " : "") + names[i];
  return s + (names.size() > 3 ? ", ..." : "");
}

// A float32 or float16 tensor entry (what a reduced-precision run writes).
bool narrow_float(const DumpTensorInfo& t) {
  const std::optional<DType> d = dtype_from_name(t.dtype);
  return d && (*d == DType::Float32 || *d == DType::Float16);
}

// `coarse` is `fine` element for element, each value as is or rounded to `p` (to nearest even:
// float16's range and mantissa, bfloat16's 7 or TF32's 10 mantissa bits).
bool is_rounded(const Tensor& fine, const Tensor& coarse, Precision p) {
  const auto round = [p](float v) {
    switch (p) {
      case Precision::Fp16: return half_to_float(float_to_half(v));
      case Precision::Bf16: return round_mantissa(v, 7);
      case Precision::Tf32: return round_mantissa(v, 10);
      case Precision::Fp32: break;
    }
    return v;
  };
  if (fine.numel() != coarse.numel()) return false;
  for (int64_t i = 0; i < fine.numel(); ++i) {
    const float f = float(element_as_double(fine, i)), c = float(element_as_double(coarse, i));
    if (float_bits(round(f)) != float_bits(c) && float_bits(f) != float_bits(c)) return false;
  }
  return true;
}

class Comparer {
 public:
  Comparer(const Dump& a, const Dump& b, const CompareOptions& o)
      : a_(a), b_(b), o_(o), up_{std::vector<int64_t>(a.layers.size(), -1), std::vector<int64_t>(b.layers.size(), -1)},
        differs_{std::vector<char>(a.layers.size(), 0), std::vector<char>(b.layers.size(), 0)},
        steers_{std::vector<char>(a.layers.size(), 0), std::vector<char>(b.layers.size(), 0)},
        after_steering_{std::vector<char>(a.layers.size(), 0), std::vector<char>(b.layers.size(), 0)},
        b_of_a_(a.layers.size(), -1), a_of_b_(b.layers.size(), -1), canonical_{canonical_calls(a), canonical_calls(b)} {}

  CompareResult run() {
    CompareResult res;
    res.provenance = provenance();
    b_of_a_ = align_layers(alignment_of(a_, canonical_[0]), alignment_of(b_, canonical_[1]));
    for (size_t i = 0; i < a_.layers.size(); ++i) {
      if (b_of_a_[i] >= 0) a_of_b_[size_t(b_of_a_[i])] = int64_t(i);
    }
    excuse_precision_casts();
    excuse_recomputed();
    judge_pairs(res.timing);
    res.expected = rounded_inputs_line();
    // Rows in A's order; B's unpaired layers where they ran among the pairs. A pair B ran in
    // another order (layer_alignment.h) is one row, at A's place.
    int64_t next_b = 0;  // B's unpaired layers before this one have their rows
    auto emit_b_only_until = [&](int64_t end) {
      for (; next_b < end; ++next_b) {
        if (a_of_b_[size_t(next_b)] < 0) add(res, one_sided(1, next_b));
      }
    };
    for (size_t i = 0; i < a_.layers.size(); ++i) {
      const int64_t twin = b_of_a_[i];
      if (twin < 0) {
        add(res, one_sided(0, int64_t(i)));
        continue;
      }
      emit_b_only_until(twin);
      add(res, paired(int64_t(i), twin));
    }
    emit_b_only_until(int64_t(b_.layers.size()));
    if (!one_sided_casts_.empty()) {
      res.expected.push_back(fmt::format("{} cast{} on one side only, to the precision of its run ({}): {}", one_sided_casts_.size(),
                                         one_sided_casts_.size() == 1 ? "" : "s", precision_profile(o_.judge.precision).name,
                                         first_names(one_sided_casts_)));
    }
    for (const LayerReport& l : res.layers) {
      res.passed += l.state == State::Passed;
      res.failed += l.state == State::Failed && !l.propagated();
      res.propagated += l.propagated();
      res.mistrusted += l.state == State::Mistrusted;
      res.unchecked += l.state == State::Unchecked;
      res.structural += l.structural;
      res.explained += l.explained && l.state == State::Passed;
      res.structural_origins += l.structural && l.state == State::Failed && l.propagated_from.empty();
    }
    return res;
  }

 private:
  const Dump& dump(int side) const { return side == 0 ? a_ : b_; }

  void add(CompareResult& res, LayerReport r) {
    const bool shown = !o_.layers || std::regex_search(r.name, *o_.layers);
    if (r.origin && shown) {
      if (res.origin < 0) {
        res.origin = int64_t(res.layers.size());
      } else {
        res.other_origins.push_back(int64_t(res.layers.size()));
      }
    }
    if (shown) res.layers.push_back(std::move(r));
  }

  // The first origin upstream of layer i of `side` in the dataflow: through its inputs' sources;
  // an input whose producer is not in the dump, or a layer without recorded inputs, may follow
  // any earlier origin.
  int64_t upstream(int side, int64_t i) const {
    const DumpLayer& l = dump(side).layers[size_t(i)];
    int64_t best = -1;
    bool unknown = l.inputs.empty();
    for (const DumpTensorInfo& t : l.inputs) {
      if (t.source_layer >= 0) {
        const int64_t u = up_[side][size_t(t.source_layer)];
        if (u >= 0 && (best < 0 || u < best)) best = u;
      } else if (!t.source.empty()) {
        unknown = true;
      }
    }
    // Origins are numbered in the order they are found: the first is 0.
    if (unknown && !origin_names_.empty()) best = 0;
    return best;
  }

  // An input of layer i of `side` that comes from a layer whose outputs steer (steers_), or from
  // one downstream of such a layer: once control flow has followed the data (detections in
  // another order, another count of boxes), the Python numbers taken from it (a box's size) shape
  // the calls after it too.
  std::string steering_source(int side, int64_t i) const { return input_from(side, i, after_steering_); }

  // An input of layer i of `side` that comes straight from a layer whose outputs steer.
  std::string steered_input(int side, int64_t i) const { return input_from(side, i, steers_); }

  // The source of the first input of layer i of `side` whose producer `marked` marks; "" when none.
  std::string input_from(int side, int64_t i, const std::vector<char> (&marked)[2]) const {
    for (const DumpTensorInfo& t : dump(side).layers[size_t(i)].inputs) {
      if (t.source_layer >= 0 && marked[side][size_t(t.source_layer)]) return t.source;
    }
    return "";
  }

  // What the layers downstream read of layer i of `side`: whether it differs, the origin it
  // carries (or -1), whether its outputs steer what follows.
  void record_downstream(int side, int64_t i, bool differs, int64_t origin_here, bool steers) {
    differs_[side][size_t(i)] = differs;
    steers_[side][size_t(i)] = steers;
    after_steering_[side][size_t(i)] = steers || !steering_source(side, i).empty();
    up_[side][size_t(i)] = origin_here;
  }

  LayerReport report_for(const DumpLayer& l) const {
    LayerReport r;
    r.name = l.name, r.op = l.op, r.line = l.line, r.index = l.index, r.occurrence = l.occurrence;
    return r;
  }

  void propagate(LayerReport& r, int64_t up) const {
    r.state = State::Failed;
    r.propagated_from = origin_names_.at(up);
  }

  void make_origin(LayerReport& r) {
    r.origin = true;
    r.state = State::Failed;
    const int64_t id = int64_t(origin_names_.size());
    origin_names_.push_back(r.name);
    origin_id_ = id;
  }

  LayerReport one_sided(int side, int64_t i) {
    const DumpLayer& l = dump(side).layers[size_t(i)];
    LayerReport r = report_for(l);
    const char* other = side == 0 ? "B" : "A";
    const int64_t up = upstream(side, i);
    const std::string source = steering_source(side, i);
    r.reason = std::string("missing in ") + other;
    if (const auto same = excused_recomputed_[side].find(i); same != excused_recomputed_[side].end()) {
      // Before any origin upstream: what it computed reaches the paired layers as the other side
      // has it, so nothing downstream depends on it having been computed here.
      r.explained = true;
      r.reason += " (" + same->second + ")";
      record_downstream(side, i, false, -1, false);
      return r;
    }
    if (up >= 0) {
      propagate(r, up);
    } else if (!source.empty()) {
      r.explained = true;
      r.reason += " (the control flow followed data that differs: " + source + ")";
    } else if (const auto cast = excused_casts_[side].find(i); cast != excused_casts_[side].end()) {
      r.explained = true;
      r.reason += " (" + cast->second + ")";
      one_sided_casts_.push_back(l.name);
    } else {
      r.state = State::Failed;
      r.structural = true;
    }
    record_downstream(side, i, true, up, r.explained);
    return r;
  }

  // An input that no layer produced (the image, a weight) is data the two runs were given: when
  // it differs, that is a finding of its own, whatever the layer computed.
  // Seen through one side's excused casts (through_casts): the image a `.half()` rounded is the
  // image given, compared with the other side's.
  std::string unproduced_input_difference(const DumpLayer& la, const DumpLayer& lb, std::vector<std::string>& rounded) const {
    for (const DumpTensorInfo& a_in : la.inputs) {
      const DumpTensorInfo* b_in = input_named(lb, a_in.role);
      if (!b_in) continue;
      const DumpTensorInfo *ta = given_through_casts(0, a_in), *tb = given_through_casts(1, *b_in);
      if (!ta || !tb) continue;
      if (ta->dtype == tb->dtype && ta->shape == tb->shape && a_.hash_of(*ta) == b_.hash_of(*tb)) continue;
      if (rounded_by_precision(*ta, *tb)) {
        rounded.push_back(a_in.role);
        continue;
      }
      return "input " + a_in.role + " differs and no layer produced it";
    }
    return "";
  }

  // The given data (no producer) an input is, seen through excused casts; null when a layer
  // produced it.
  const DumpTensorInfo* given_through_casts(int side, const DumpTensorInfo& t) const {
    const DumpTensorInfo& in = through_casts(side, t);
    return in.source.empty() ? &in : nullptr;
  }

  // The header's line for the given inputs rounded_by_precision excused: how many, the first few.
  std::vector<std::string> rounded_inputs_line() const {
    std::vector<std::string> names;
    for (const auto& [ia, w] : work_) {
      for (const std::string& role : w.rounded_inputs) names.push_back(a_.layers[size_t(ia)].name + " " + role);
    }
    if (names.empty()) return {};
    return {fmt::format("{} input{} no layer produced (the image, weights) one side took rounded to {}, as that precision does: {}",
                        names.size(), names.size() == 1 ? "" : "s", precision_profile(o_.judge.precision).name, first_names(names))};
  }

  // Under a reduced precision (--precision fp16, bf16, tf32), a reduced-precision run takes the
  // image and the weights rounded to it: an input no layer produced whose one side is the other's
  // value rounded so, element for element, is what that precision does, not an origin.
  bool rounded_by_precision(const DumpTensorInfo& ta, const DumpTensorInfo& tb) const {
    const Precision p = o_.judge.precision;
    if (p == Precision::Fp32 || ta.shape != tb.shape || !narrow_float(ta) || !narrow_float(tb)) return false;
    const Tensor x = a_.view(ta), y = b_.view(tb);
    // Which side is the coarse one is the data's to say: try each.
    return is_rounded(x, y, p) || is_rounded(y, x, p);
  }

  // The layers one side alone has that are casts to the run's precision (precision_cast), known
  // before any pair is judged: a pair's inputs are followed through them (through_casts).
  void excuse_precision_casts() {
    for (int side = 0; side < 2; ++side) {
      const std::vector<int64_t>& other = side == 0 ? b_of_a_ : a_of_b_;
      for (size_t i = 0; i < dump(side).layers.size(); ++i) {
        if (other[i] >= 0) continue;
        if (std::string why = precision_cast(side, dump(side).layers[i]); !why.empty()) excused_casts_[side][int64_t(i)] = std::move(why);
      }
    }
  }

  // The layers one side alone has whose results reach paired layers only as the values the
  // other side's twins took there (from a cache, as data given, by another path): a grid one run
  // builds and the other took from a cache filled before the dump (a warm-up), a copy one side
  // alone makes. Known before any pair is judged, so a pair fed by one is not called rewired.
  void excuse_recomputed() {
    for (int side = 0; side < 2; ++side) {
      const std::vector<int64_t>& other = side == 0 ? b_of_a_ : a_of_b_;
      std::vector<std::vector<std::pair<int64_t, size_t>>> consumers(dump(side).layers.size());
      for (size_t j = 0; j < dump(side).layers.size(); ++j) {
        const std::vector<DumpTensorInfo>& in = dump(side).layers[j].inputs;
        for (size_t k = 0; k < in.size(); ++k) {
          if (in[k].source_layer >= 0) consumers[size_t(in[k].source_layer)].push_back({int64_t(j), k});
        }
      }
      for (size_t i = 0; i < dump(side).layers.size(); ++i) {
        if (other[i] >= 0 || excused_casts_[side].count(int64_t(i))) continue;
        if (std::string where = recomputed_as_used(side, int64_t(i), consumers); !where.empty()) {
          excused_recomputed_[side][int64_t(i)] = std::move(where);
        }
      }
    }
  }

  // Following the outputs of one side's unpaired layer i through the unpaired layers they feed:
  // "<layer> <input>" of the first paired layer reached, when every paired layer reached takes
  // values its twin on the other side also took (within 16 times the tolerance, as copies of
  // agreeing data stay); when none is reached, a note that the values went into Python numbers,
  // if every unpaired layer reached that nothing reads had its output read so (`to_python`: a
  // scale MultiScaleRoIAlign works out on its first call and keeps; what such numbers change shows
  // in the calls after them); "" otherwise (an unused tensor is not known to be harmless: a
  // model's own output is one).
  std::string recomputed_as_used(int side, int64_t i, const std::vector<std::vector<std::pair<int64_t, size_t>>>& consumers) const {
    const std::vector<int64_t>& other = side == 0 ? b_of_a_ : a_of_b_;
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
        const std::vector<DumpTensorInfo>& outs = dump(side).layers[size_t(u)].outputs;
        into_python = into_python && std::any_of(outs.begin(), outs.end(), [](const DumpTensorInfo& o) { return o.to_python; });
      }
      for (const DumpTensorInfo& t : dump(side).layers[size_t(u)].inputs) {
        into_python = into_python && t.source_layer >= 0 && other[size_t(t.source_layer)] < 0;
      }
      for (const auto& [j, k] : consumers[size_t(u)]) {
        const DumpLayer& l = dump(side).layers[size_t(j)];
        if (other[size_t(j)] < 0) {
          if (seen.insert(j).second) todo.push_back(j);
          if (seen.size() > 64) return "";  // a long computation of its own is not a cached value
          continue;
        }
        const DumpTensorInfo* twin = input_named(dump(1 - side).layers[size_t(other[size_t(j)])], l.inputs[k].role);
        if (!twin || !same_values(side, l.inputs[k], *twin)) return "";
        if (reached.empty()) reached = l.name + " " + l.inputs[k].role;
      }
    }
    const std::string other_side = side == 0 ? "B" : "A";
    if (!reached.empty()) return "computed in this run only, and what it gives is what " + other_side + " used: " + reached;
    if (into_python) return "computed in this run only, into Python numbers no layer reads (a value a module works out once and keeps)";
    return "";
  }

  // Whether tensor t of `side` and tensor u of the other side hold the same values: the same
  // bytes, or floats within 16 times the tolerance of the comparison.
  bool same_values(int side, const DumpTensorInfo& t, const DumpTensorInfo& u) const {
    if (t.dtype != u.dtype || t.shape != u.shape) return false;
    if (dump(side).hash_of(t) == dump(1 - side).hash_of(u)) return true;
    const Tensor x = dump(side).load(t), y = dump(1 - side).load(u);
    if (!is_floating(x.dtype())) return false;
    Tolerance tol = profile_tolerance(x.dtype(), precision_profile(o_.judge.precision));
    tol.atol *= 16, tol.rtol *= 16;
    return compare_tensors(x, y, tol).state != State::Failed;
  }

  // A cast that one run has and the other lacks (`.half()` of the image, `.to(float16)` before a
  // head, `.float()` after it), in a comparison at a reduced precision: its output is its input
  // as is, or rounded to that precision. That is the run's precision changing, not another
  // model; "" when the layer is not such a cast.
  std::string precision_cast(int side, const DumpLayer& l) const {
    const Precision p = o_.judge.precision;
    const TorchCall* cast = torch_call(l.op);
    if (p == Precision::Fp32 || !cast || !cast->cast || l.inputs.size() != 1 || l.outputs.size() != 1) return "";
    const DumpTensorInfo &in = l.inputs[0], &out = l.outputs[0];
    if (in.shape != out.shape || !narrow_float(in) || !narrow_float(out)) return "";
    const Tensor x = dump(side).view(in), y = dump(side).view(out);
    if (!is_rounded(x, y, p)) return "";
    return std::string("a cast in ") + (side == 0 ? "A" : "B") + "'s run only, which keeps its values or rounds them to " +
           precision_profile(p).name + ": the run's precision, not another model";
  }

  // An input read from another layer on one side than on the other (a cat fed in swapped order,
  // a residual taken from the wrong block): both producers are in both dumps, paired, and differ.
  // Each side may then match the judge on its own inputs, so only the wiring shows the defect.
  std::string rewired_input(const DumpLayer& la, const DumpLayer& lb) const {
    for (size_t k = 0; k < la.inputs.size() && k < lb.inputs.size(); ++k) {
      const DumpTensorInfo &ea = through_casts(0, la.inputs[k]), &eb = through_casts(1, lb.inputs[k]);
      const std::string &sa = ea.source, &sb = eb.source;
      const int64_t la_src = ea.source_layer, lb_src = eb.source_layer;
      const std::string& role_k = la.inputs[k].role;
      // One side's input computed by layers the other side lacks, giving what that side took
      // as data given (a grid it had cached): the same data, not another wiring.
      const bool recomputed = (la_src >= 0 && excused_recomputed_[0].count(la_src)) || (lb_src >= 0 && excused_recomputed_[1].count(lb_src));
      if (recomputed) continue;
      if (sa.empty() != sb.empty()) {
        const auto from = [](const std::string& source) { return source.empty() ? std::string("no layer (data given)") : source; };
        return "input " + role_k + " comes from another layer: A reads " + from(sa) + ", B reads " + from(sb);
      }
      if (la_src < 0 || lb_src < 0) continue;
      const int64_t pa = b_of_a_[size_t(la_src)];
      if (pa < 0 || a_of_b_[size_t(lb_src)] < 0) continue;  // a producer the other dump lacks: no telling
      const auto role = [](const std::string& source) { return source.substr(source.rfind(':') + 1); };
      if (pa != lb_src || role(sa) != role(sb)) {
        return "input " + role_k + " comes from another layer: A reads " + sa + ", B reads " + sb;
      }
    }
    return "";
  }

  // An input seen through the casts one side alone has and precision_cast excused: the entry
  // whose source (a layer, or none for data given) the input's values come from.
  const DumpTensorInfo& through_casts(int side, const DumpTensorInfo& t) const {
    const DumpTensorInfo* cur = &t;
    while (cur->source_layer >= 0 && excused_casts_[side].count(cur->source_layer)) {
      cur = &dump(side).layers[size_t(cur->source_layer)].inputs[0];
    }
    return *cur;
  }

  // A side's input that is not what its recorded views and copies (`via`) make of that side's own
  // producer output: a wrong copy kernel, a wrong transpose, a value written between two layers.
  // Each side is checked against itself, so two correct runs whose producers differ by rounding
  // pass whatever the precision; "" when every such input of the layer holds.
  std::string copy_finding(int side, const DumpLayer& l) const {
    for (const DumpTensorInfo& t : l.inputs) {
      if (!t.derived || t.via.empty()) continue;
      const DumpTensorInfo* out = source_output(side, t);
      if (!out) continue;
      const ViaCheck c = check_via(dump(side).load(*out), dump(side).load(t), t.via);
      if (c.checked && !c.mismatch.empty()) {
        return std::string(side == 0 ? "A" : "B") + "'s input " + t.role + " is not " + t.source + " through " + via_text(t.via) +
               ": " + c.mismatch;
      }
    }
    return "";
  }

  // The output an input names as its source, in the same dump; null when none is there.
  const DumpTensorInfo* source_output(int side, const DumpTensorInfo& t) const {
    if (t.source_layer < 0) return nullptr;
    const std::string role = t.source.substr(t.source.rfind(':') + 1);
    const std::vector<DumpTensorInfo>& outs = dump(side).layers[size_t(t.source_layer)].outputs;
    const auto out = std::find_if(outs.begin(), outs.end(), [&](const DumpTensorInfo& o) { return o.role == role; });
    return out == outs.end() ? nullptr : &*out;
  }

  // An input taken from the same producer on both sides, a producer whose outputs agree within
  // tolerance, yet the input itself differs beyond it: the view or copy between the producer and
  // this layer (a chunk, a crop, a slice) is not the same on both sides. Each side may match the
  // judge on its own inputs, so only this shows the defect. Inputs that are their producer's
  // output as is agree whenever the producer does; derived ones are compared, under 16 times the
  // dtype's tolerance (copies of agreeing data stay well within it, a wrong slice does not).
  std::string inconsistent_input(const DumpLayer& la, const DumpLayer& lb) const {
    for (size_t k = 0; k < la.inputs.size() && k < lb.inputs.size(); ++k) {
      const DumpTensorInfo &ta = la.inputs[k], &tb = lb.inputs[k];
      if (!ta.derived && !tb.derived) continue;
      if (ta.source_layer < 0 || tb.source_layer < 0 || b_of_a_[size_t(ta.source_layer)] != tb.source_layer) continue;
      if (!ta.via.empty() && !tb.via.empty()) {
        // Each side's copy is checked against its own producer (copy_finding); what is left to
        // compare is which elements the two chains take, and where they put them, whatever the
        // producer's values.
        const DumpTensorInfo *pa = source_output(0, ta), *pb = source_output(1, tb);
        if (!pa || !pb || pa->shape != pb->shape) continue;
        const std::vector<int64_t> from_a = via_sources(pa->shape, ta.via), from_b = via_sources(pb->shape, tb.via);
        if (from_a.empty() || from_b.empty() || (from_a == from_b && ta.shape == tb.shape)) continue;
        return "input " + ta.role + " takes other elements of " + ta.source + ": A through " + via_text(ta.via) + ", B through " +
               via_text(tb.via) + ": the view or copy between them differs (the model code)";
      }
      if (differs_[0][size_t(ta.source_layer)] || differs_[1][size_t(tb.source_layer)]) continue;
      const std::string what = "input " + ta.role + " differs though its producer " + ta.source + " agrees";
      if (ta.dtype != tb.dtype || ta.shape != tb.shape) {
        return what + " (A " + ta.dtype + " " + Shape(ta.shape).str() + ", B " + tb.dtype + " " + Shape(tb.shape).str() +
               "): the view or copy between them differs (the model code)";
      }
      if (a_.hash_of(ta) == b_.hash_of(tb)) continue;
      const Tensor x = a_.load(ta), y = b_.load(tb);
      Tolerance tol = profile_tolerance(x.dtype(), precision_profile(o_.judge.precision));
      tol.atol *= 16, tol.rtol *= 16;
      const TensorDiff d = compare_tensors(x, y, tol);
      if (d.state == State::Failed) return what + ": " + d.reason + ": the view or copy between them differs (the model code)";
    }
    return "";
  }

  // Outputs that differ as control flow reads them: another shape or dtype, or an integer or bool
  // output (an index, a count, a mask) that differs.
  bool steering_difference(const DumpLayer& l, const LayerVerdict& v) const {
    for (size_t k = 0; k < v.outputs.size(); ++k) {
      const TensorDiff& d = v.outputs[k].diff;
      if (d.structural) return true;
      const std::optional<DType> dt = k < l.outputs.size() ? dtype_from_name(l.outputs[k].dtype) : std::nullopt;
      if (d.bad > 0 && dt && !is_floating(*dt)) return true;
    }
    return v.outputs.size() != l.outputs.size();
  }

  // Both sides ran on the same input bytes, so the judge runs once. Recorded hashes of one
  // algorithm that differ answer no without reading: were they lying, the judge would only run
  // twice on the same bytes, which gives the same verdict (and check_owed finds the lie). A yes
  // comes from hashes of the bytes.
  bool same_input_bytes(const DumpLayer& la, const DumpLayer& lb) const {
    if (la.inputs.empty() || la.inputs.size() != lb.inputs.size()) return false;
    for (size_t k = 0; k < la.inputs.size(); ++k) {
      const DumpTensorInfo &ta = la.inputs[k], &tb = lb.inputs[k];
      if (ta.role != tb.role || ta.dtype != tb.dtype || ta.shape != tb.shape) return false;
      if (!ta.hash.empty() && !tb.hash.empty() && !Dump::legacy_hash(ta) && !Dump::legacy_hash(tb) && ta.hash != tb.hash) return false;
    }
    for (size_t k = 0; k < la.inputs.size(); ++k) {
      if (a_.hash_of(la.inputs[k]) != b_.hash_of(lb.inputs[k])) return false;
    }
    return true;
  }

  LayerReport paired(int64_t ia, int64_t ib) {
    const DumpLayer &la = a_.layers[size_t(ia)], &lb = b_.layers[size_t(ib)];
    LayerReport r = report_for(la);
    int64_t up = upstream(0, ia);
    const int64_t up_b = upstream(1, ib);
    if (up_b >= 0 && (up < 0 || up_b < up)) up = up_b;
    const std::string &ca = canonical_[0][size_t(ia)], &cb = canonical_[1][size_t(ib)];
    if (ca != cb) r.line_b = lb.line;
    origin_id_ = -1;
    // Lines that differ only in the input shapes they name are the same call when those shapes
    // followed data that steers (a count upstream differs); otherwise the model code differs.
    // Lines that differ only in numbers (input shapes, a box's size read into a Python number)
    // are the same call when those numbers followed data that steers, upstream in the dataflow;
    // any other difference (align_corners, another mode) is the model code.
    const bool steered = !steering_source(0, ia).empty() || !steering_source(1, ib).empty();
    const bool shapes_followed_data = ca != cb && steered && only_numbers_differ(ca, cb);
    // Directly after a layer that steers, layers pair iteration by iteration as best they can
    // (a per-detection loop): which producer feeds which is no finding there.
    const bool right_after_steering = !steered_input(0, ia).empty() || !steered_input(1, ib).empty();
    const auto judged = work_.find(ia);  // judge_pairs judged the pairs that ran the same call
    if (judged == work_.end() || (ca != cb && !shapes_followed_data)) {
      r.reason = "B ran another call: " + lb.line;
      if (up >= 0) {
        propagate(r, up);
      } else {
        r.state = State::Failed;
        r.structural = true;
      }
      record_downstream(0, ia, true, up, true), record_downstream(1, ib, true, up, true);
      return r;
    }
    PairWork& w = judged->second;
    const std::string input_finding = std::move(w.input_finding);
    r.verdict = std::move(w.verdict);
    const LayerVerdict& v = r.verdict;
    r.reason = v.reason;
    std::string rewired = v.differs && up < 0 && !right_after_steering ? rewired_input(la, lb) : "";
    if (rewired.empty() && v.differs && up < 0 && !right_after_steering && v.state != State::Failed) rewired = inconsistent_input(la, lb);
    // Copies are checked where the layer's outputs differ: a wrong copy that changes nothing
    // downstream is no finding.
    const std::string copy_a = v.differs && input_finding.empty() ? copy_finding(0, la) : "";
    const std::string copy_b = v.differs && input_finding.empty() ? copy_finding(1, lb) : "";
    if (!input_finding.empty()) {
      make_origin(r);
      r.reason = input_finding + (v.reason.empty() ? "" : "; " + v.reason);
    } else if (!copy_a.empty() || !copy_b.empty()) {
      make_origin(r);
      const Sides copies = copy_a.empty() ? Sides::B : copy_b.empty() ? Sides::A : Sides::Both;
      r.defective = Sides(int(copies) | int(v.defective()));
      r.reason = copy_a + (copy_a.empty() || copy_b.empty() ? "" : "; ") + copy_b + (v.reason.empty() ? "" : "; " + v.reason);
    } else if (!rewired.empty()) {
      make_origin(r);
      r.structural = r.rewired = true;
      r.defective = v.defective();
      r.reason = rewired + (v.reason.empty() ? "" : "; " + v.reason);
    } else if (v.state == State::Failed) {
      make_origin(r);
      r.defective = v.defective();
      r.structural = v.structural;
    } else if ((v.explained || v.state == State::Unchecked) && up >= 0) {
      propagate(r, up);
    } else {
      r.state = v.state;
      r.explained = v.explained;
    }
    const int64_t here = origin_id_ >= 0 ? origin_id_ : up;
    const bool differs = v.differs || !input_finding.empty();
    const bool steers = differs && (steering_difference(la, v) || ca != cb || r.structural);
    record_downstream(0, ia, differs, here, steers), record_downstream(1, ib, differs, here, steers);
    return r;
  }

  // What the dump level needs of a paired layer, computed before the walk in execution order
  // (which decides origins and propagation): the verdict, and an input given that differs.
  struct PairWork {
    int64_t ib = -1;
    bool same_inputs = false;
    std::string input_finding;
    std::vector<std::string> rounded_inputs;  // given inputs one side took rounded to --precision
    LayerVerdict verdict;
  };

  // Judges every pair that ran the same call, on the threads available: first the element-wise
  // pass of all of them, then the local checks of those that differ. A layer's verdict depends on
  // its two sides only, so the order does not matter; at most a layer per thread is in memory.
  void judge_pairs(CompareTiming& timing) {
    std::vector<int64_t> judged;  // A indices
    for (size_t i = 0; i < a_.layers.size(); ++i) {
      if (b_of_a_[i] < 0) continue;
      const DumpLayer &la = a_.layers[i], &lb = b_.layers[size_t(b_of_a_[i])];
      // Calls with other values in the same fields are judged too, each side on its own line:
      // whether that is another call or one that followed the data is decided in execution order.
      if (!same_fields(canonical_[0][i], canonical_[1][size_t(b_of_a_[i])]) || la.inputs.size() != lb.inputs.size()) {
        continue;
      }
      work_[int64_t(i)].ib = b_of_a_[i];
      judged.push_back(int64_t(i));
    }
    const auto each = [&](const std::vector<int64_t>& layers, const std::function<void(const DumpLayer&, const DumpLayer&, PairWork&)>& fn) {
      // A backend on a GPU is driven from one thread.
      const int64_t grain = runs_on_gpu(o_.judge.judge) ? int64_t(layers.size()) : 1;
      parallel_for(int64_t(layers.size()), grain, [&](int64_t lo, int64_t hi) {
        for (int64_t k = lo; k < hi; ++k) {
          PairWork& w = work_.at(layers[size_t(k)]);
          fn(a_.layers[size_t(layers[size_t(k)])], b_.layers[size_t(w.ib)], w);
        }
      });
    };
    Stopwatch elementwise;
    each(judged, [&](const DumpLayer& la, const DumpLayer& lb, PairWork& w) {
      // Every input entry is checked against its file's bytes before the pass is over, most of
      // them against the hash of their producer's stream (the file is not read for it).
      for (const DumpTensorInfo& t : la.inputs) a_.check_later(t);
      for (const DumpTensorInfo& t : lb.inputs) b_.check_later(t);
      w.input_finding = unproduced_input_difference(la, lb, w.rounded_inputs);
      w.same_inputs = same_input_bytes(la, lb);
      const auto [sa, sb] = layer_sides(a_, la, b_, lb, true);
      w.verdict = compare_layer_outputs(la.name, sa, sb, w.same_inputs, o_.judge);
    });
    // The inputs (some of whose elements the pass read) are checked before anything is reported
    // or judged further.
    a_.check_owed(), b_.check_owed();
    timing.elementwise_s = elementwise.seconds();
    std::vector<int64_t> differing;
    for (const int64_t i : judged) {
      if (work_.at(i).verdict.differs) differing.push_back(i);
    }
    Stopwatch local;
    each(differing, [&](const DumpLayer& la, const DumpLayer& lb, PairWork& w) {
      const auto [sa, sb] = layer_sides(a_, la, b_, lb, false);
      check_layer_locally(la.name, sa, sb, w.same_inputs, o_.judge, w.verdict);
    });
    timing.local_s = local.seconds();
    timing.judged = int64_t(judged.size());
    for (const int64_t i : judged) {
      const JudgeTiming& t = work_.at(i).verdict.timing;
      timing.elementwise_thread_s += t.elementwise_ms / 1e3;
      timing.precision_thread_s += t.precision_ms / 1e3;
      if (!work_.at(i).verdict.differs) continue;
      CompareTiming::LocalChecks& op = timing.local_by_op[a_.layers[size_t(i)].op];
      op.layers += 1;
      op.thread_s += t.local_ms / 1e3;
    }
  }

  std::vector<std::string> provenance() const {
    std::vector<std::string> out;
    auto differ = [&](const std::string& what, const std::string& x, const std::string& y) {
      if (x != y) out.push_back(fmt::format("{}: A {}, B {}", what, x.empty() ? "(none)" : x, y.empty() ? "(none)" : y));
    };
    differ("model", a_.model, b_.model);
    const auto seed = [](const Dump& d) { return d.seed ? std::to_string(*d.seed) : std::string("not recorded"); };
    differ("seed", seed(a_), seed(b_));
    std::set<std::string> keys;
    for (const auto& [k, v] : a_.run) keys.insert(k);
    for (const auto& [k, v] : b_.run) keys.insert(k);
    for (const std::string& k : keys) {
      if (k == "model" || k == "seed") continue;
      const auto x = a_.run.find(k), y = b_.run.find(k);
      differ(k, x == a_.run.end() ? "" : x->second, y == b_.run.end() ? "" : y->second);
    }
    differ("tool version", a_.tool_version, b_.tool_version);
    return out;
  }

  const Dump &a_, &b_;
  const CompareOptions& o_;
  // Per side and layer: the id (into origin_names_) of the first origin upstream, or -1; and
  // whether its outputs differ between A and B.
  std::vector<int64_t> up_[2];
  std::vector<char> differs_[2];
  // Per side and layer: its outputs differ in a way control flow follows (a count or shape, an
  // index, a mask), so layers downstream may run on one side only, or with other input shapes.
  // Rounding differences in float values never steer.
  std::vector<char> steers_[2];
  std::vector<char> after_steering_[2];  // steers_, or downstream of a layer that does
  std::vector<int64_t> b_of_a_, a_of_b_;  // the paired layer on the other side, or -1
  const std::vector<std::string> canonical_[2];  // each layer's canonical_call, by side
  std::map<int64_t, PairWork> work_;      // by A index: the pairs judged
  std::vector<std::string> one_sided_casts_;  // layers precision_cast excused
  std::map<int64_t, std::string> excused_casts_[2];  // precision_cast's by side and index: why
  std::map<int64_t, std::string> excused_recomputed_[2];  // recomputed_as_used's by side and index: where
  std::vector<std::string> origin_names_;
  int64_t origin_id_ = -1;  // the origin the layer being judged became, or -1
};

}  // namespace

CompareResult compare_dumps(const Dump& a, const Dump& b, const CompareOptions& o) { return Comparer(a, b, o).run(); }

}  // namespace parity
