// Every op parity knows, in the order YOLOv5 meets them: one line per op, whose traits its own
// folder defines (kernels/op_traits.h).
#include "core/error.h"
#include "kernels/add/add.h"
#include "kernels/argsort/argsort.h"
#include "kernels/cat/cat.h"
#include "kernels/conv2d/conv2d.h"
#include "kernels/detect_decode/detect_decode.h"
#include "kernels/index/index.h"
#include "kernels/max_dim/max_dim.h"
#include "kernels/maxpool2d/maxpool2d.h"
#include "kernels/mul/mul.h"
#include "kernels/nms/nms.h"
#include "kernels/nonzero/nonzero.h"
#include "kernels/op_traits.h"
#include "kernels/sigmoid/sigmoid.h"
#include "kernels/silu/silu.h"
#include "kernels/threshold/threshold.h"
#include "kernels/upsample_nearest2d/upsample_nearest2d.h"

namespace parity {

const std::vector<OpTraits>& op_table() {
  static const std::vector<OpTraits> table = {
      // The network.
      conv2d_traits(), silu_traits(), add_traits(), cat_traits(), maxpool2d_traits(), upsample_nearest2d_traits(),
      sigmoid_traits(), detect_decode_traits(),
      // val.py's post-processing.
      threshold_traits(), nonzero_traits(), index_traits(), max_dim_traits(), argsort_traits(), nms_traits(),
      // Not in YOLOv5's graph: the worked example of adding an op (docs/EXTENDING.md).
      mul_traits(),
  };
  return table;
}

const OpTraits& op_traits(std::string_view op) {
  for (const OpTraits& t : op_table()) {
    if (t.name == op) return t;
  }
  std::string known;
  for (const OpTraits& t : op_table()) known += (known.empty() ? "" : " ") + t.name;
  throw Error("unknown op '" + std::string(op) + "' (known: " + known + ")");
}

const OpTraits& op_traits_of(std::string_view line) { return op_traits(op_name_of(line)); }

namespace {

// The line without its `precision=` field, and the precision it names.
std::string without_half(std::string_view line, HalfType& half) {
  std::string rest;
  size_t at = 0;
  bool seen = false;
  while (at < line.size()) {
    const size_t start = line.find_first_not_of(" \t", at);
    if (start == std::string_view::npos) break;
    const size_t end = std::min(line.find_first_of(" \t", start), line.size());
    const std::string_view word = line.substr(start, end - start);
    if (word.rfind("precision=", 0) == 0) {
      if (seen) throw Error(std::string(line) + ": precision= given twice");
      seen = true;
      half = half_from_name(word.substr(10));
    } else {
      rest += (rest.empty() ? "" : " ") + std::string(word);
    }
    at = end;
  }
  return rest;
}

}  // namespace

namespace {
thread_local HalfType call_half = HalfType::None;
}
HalfType half_in_scope() { return call_half; }
HalfScope::HalfScope(HalfType h) : ScopedSetting(call_half, h) {}

const char* half_name(HalfType h) { return h == HalfType::Fp16 ? "fp16" : h == HalfType::Bf16 ? "bf16" : "fp32"; }

HalfType half_from_name(std::string_view name) {
  if (name == "fp16") return HalfType::Fp16;
  if (name == "bf16") return HalfType::Bf16;
  if (name == "fp32") return HalfType::None;
  throw Error("precision \"" + std::string(name) + "\" is not fp32, fp16 or bf16");
}

std::string with_half(std::string_view line, HalfType h) {
  HalfType ignored = HalfType::None;
  const std::string rest = without_half(line, ignored);
  return h == HalfType::None ? rest : rest + " precision=" + half_name(h);
}

Call::Call(std::string_view line) : traits_(&op_traits_of(line)) {
  const std::string rest = without_half(line, half_);
  Parsed p = traits_->parse(rest);
  params_ = std::move(p.params), type_ = p.type, line_ = std::move(p.line), inputs_ = std::move(p.inputs);
  if (half_ == HalfType::None) return;
  // Half precision is a float32 call's: its float inputs carry the type's values.
  for (const TensorSpec& s : inputs_) {
    if (is_floating(s.dtype) && s.dtype != DType::Float32) {
      throw Error(line_ + ": precision=" + half_name(half_) + " applies to float32 calls, and input " + s.name + " is " +
                  std::string(dtype_name(s.dtype)));
    }
  }
  line_ += std::string(" precision=") + half_name(half_);
}

const std::string& Call::op() const { return traits_->name; }

}  // namespace parity
