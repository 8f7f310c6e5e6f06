#include "compare/layer_sides.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <regex>
#include <tuple>

#include "core/mapped_file.h"

namespace parity {

namespace {

// A PyTorch factory (torch.zeros(4, 3), arange) takes no tensor: its inputs are all recorded, none.
bool takes_no_tensor(const DumpLayer& l) {
  static const std::regex tensor_field(R"((^| )in[0-9]+(_[0-9]+)?=)");
  return l.inputs.empty() && l.op.rfind("torch.", 0) == 0 && !std::regex_search(l.line, tensor_field);
}

// What the recording says of how a side's kernel ran: its inputs' layout, the type it computed in
// (LayerSide).
void note_layout(const Dump& d, const DumpLayer& l, LayerSide& s) {
  s.strided_inputs = std::any_of(l.inputs.begin(), l.inputs.end(), [](const DumpTensorInfo& t) { return t.strided; });
  s.first_input_rank = l.inputs.empty() ? 0 : l.inputs[0].shape.size();
  s.computed_in = computed_in(l);
  s.float32_kernels = l.kernels_in == "float32";
  s.tf32_kernels = l.kernels_in == "tf32";
  // An input whose producer held it in a half type (cast_from), or that is one, unless a cast
  // between them made it another type (`q.float()`: the kernel took float32).
  for (const DumpTensorInfo& t : l.inputs) {
    if (t.dtype == "float16" || t.dtype == "bfloat16") s.half_inputs = true;
    std::string cast;
    for (const ViaStep& step : t.via) cast = step.cast.empty() ? cast : step.cast;
    if (!cast.empty()) {
      if (cast == "float16" || cast == "bfloat16") s.half_inputs = true;
      continue;
    }
    if (const DumpTensorInfo* o = d.source_of(t); o && !o->cast_from.empty()) s.half_inputs = true;
  }
}

}  // namespace

Precision computed_in(const DumpLayer& l) {
  Precision p = Precision::Fp32;
  for (const DumpTensorInfo& t : l.outputs) {
    if (t.cast_from == "bfloat16") p = coarser(p, Precision::Bf16);
    if (t.cast_from == "float16") p = coarser(p, Precision::Fp16);
  }
  return p;
}

LayerSide layer_side(const Dump& d, const DumpLayer& l) {
  LayerSide s;
  s.line = l.line, s.call = l.call;
  note_layout(d, l, s);
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
// are compared, widened; the local checks read them whole). Where a side records no hash (a
// parity_torch dump), float outputs of one dtype and shape are streamed too: hashing both first
// would read each twice, and the stream's own hashes say whether they were identical. A local
// check streams a float output against the judge's (each side on its own). Other outputs are
// read whole once where their bytes differ; otherwise both are hashed first, and read only if
// they differ after all (a manifest that lies), the same bytes only mapped, for the few elements
// the mistrust scan reads. Either way identity comes from hashes of the bytes.
enum class Reading { Streamed, Unread, Other };

// `recorded_differ`: both outputs have recorded hashes of the current algorithm, and they differ;
// `unrecorded`: a side records no hash for it.
Reading reading_of(const DumpTensorInfo& t, const DumpTensorInfo& ta, const DumpTensorInfo& tb, bool stream, bool recorded_differ,
                   bool unrecorded) {
  const std::optional<DType> dtype = dtype_from_name(t.dtype);
  const bool floats = dtype && is_floating(*dtype);
  if (!stream) return floats && !Dump::legacy_hash(t) ? Reading::Streamed : Reading::Other;
  const bool same_form = ta.shape == tb.shape && ta.dtype == tb.dtype;
  if (unrecorded && floats && same_form && !Dump::legacy_hash(ta) && !Dump::legacy_hash(tb)) return Reading::Streamed;
  if (!recorded_differ) return Reading::Other;
  if (ta.shape != tb.shape) return Reading::Unread;
  return floats && same_form ? Reading::Streamed : Reading::Other;
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
  note_layout(d, l, side);
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
      // reading_of reads the other side's fields only where both are present (recorded_differ, unrecorded).
      const bool unrecorded = ta && tb && (ta->hash.empty() || tb->hash.empty());
      add_output(*d, *t, k, reading_of(*t, ta ? *ta : *t, tb ? *tb : *t, stream, recorded_differ, unrecorded), differs, *side);
    }
  }
  add_inputs(a, la, stream, s.first);
  add_inputs(b, lb, stream, s.second);
  return s;
}

}  // namespace parity
