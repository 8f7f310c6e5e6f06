// The judge on call lines whose tensors do not fit them, as a crafted or mis-recorded dump gives
// it (a conv2d line whose padding cannot make the output the dump holds): every op, with each
// input's and output's shape and dtype changed as the fuzzer's bytes say, judged by judge_layer
// (the element-wise pass with its bounds and statistical test, then the local checks on both
// sides). It may refuse only with parity::Error; a read out of bounds is a sanitizer finding.
//
// Input bytes: [op][flags][one byte per input of A][per output of A][the same for B][seed...].
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "compare/judge.h"
#include "core/error.h"
#include "core/rng.h"
#include "core/half.h"
#include "fuzz/fuzz_target.h"
#include "kernels/backend.h"
#include "kernels/op_traits.h"
#include "kernels/seeded_inputs.h"

namespace {

using namespace parity;

// One small line per op, so an input runs in milliseconds; every op of the table has one
// (checked on the first input).
const std::vector<std::string>& small_lines() {
  static const std::vector<std::string> lines = {
      "conv2d x=1x3x6x6 w=4x3x3x3 bias stride=2 pad=1",
      "conv2d x=1x4x5x5 w=4x1x3x3 pad=1 groups=4",
      "silu x=2x3x4",
      "add x=2x3x4",
      "mul x=2x3x4",
      "sigmoid x=1x6x2x2",
      "cat x=1x2x3x3,1x3x3x3 dim=1",
      "maxpool2d x=1x2x6x6 k=3 stride=1 pad=1",
      "upsample_nearest2d x=1x2x3x3 scale=2",
      "detect_decode x=1x18x2x2 stride=8 anchors=10,13,16,30,33,23",
      "threshold x=1x12 value=0.25",
      "nonzero x=6x5",
      "index x=6x7 mask=6",
      "max_dim x=6x5 dim=1 keepdim",
      "argsort x=9 descending",
      "nms boxes=8x4 iou=0.5",
      "nms boxes=8x4 iou=0.6 batched",
  };
  return lines;
}

void check_every_op_has_a_line() {
  for (const OpTraits& t : op_table()) {
    bool found = false;
    for (const std::string& l : small_lines()) found = found || op_name_of(l) == t.name;
    PARITY_FUZZ_CHECK(found);
  }
}

struct Bytes {
  const uint8_t* data;
  size_t size, at = 0;
  uint8_t next() { return at < size ? data[at++] : 0; }
};

DType other_dtype(DType d, uint8_t pick) {
  static const DType all[] = {DType::Float32, DType::Float64, DType::Float16, DType::Int64, DType::Int32, DType::Bool, DType::UInt8};
  const DType o = all[pick % 7];
  return o == d ? (d == DType::Float32 ? DType::Float64 : DType::Float32) : o;
}

// Element i of a float tensor (float16, 32 or 64), read and written as a double.
double get_float(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::Float16) return half_to_float(t.data<Half>()[i]);
  return t.dtype() == DType::Float32 ? double(t.data<float>()[i]) : t.data<double>()[i];
}
void set_float(Tensor& t, int64_t i, double v) {
  if (t.dtype() == DType::Float16) t.mutable_data<Half>()[i] = float_to_half(float(v));
  else if (t.dtype() == DType::Float32) t.mutable_data<float>()[i] = float(v);
  else t.mutable_data<double>()[i] = v;
}

// Values for a tensor of any dtype and shape: floats uniform in [-1, 1) (Inf or NaN at element 0
// when the byte says), integers small and of both signs, bools alternating.
Tensor filled(DType dtype, const Shape& shape, uint64_t seed, uint8_t special) {
  Tensor t(dtype, shape);
  if (is_floating(dtype)) {
    RngStream(seed).fill_uniform(t, -1, 1);
    if (t.numel() > 0 && special % 5 == 1) set_float(t, 0, special % 2 ? INFINITY : NAN);
  } else if (dtype == DType::Int64) {
    for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<int64_t>()[i] = i % 11 - 3;
  } else if (dtype == DType::Int32) {
    for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<int32_t>()[i] = int32_t(i % 11 - 3);
  } else if (dtype == DType::UInt8) {
    for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<uint8_t>()[i] = uint8_t(i % 2);
  } else if (dtype == DType::Bool) {
    for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<bool>()[i] = i % 2 != 0;
  }
  return t;
}

// `t` as the mode byte leaves it: unchanged (most bytes), one dimension one larger or one
// smaller, flattened, another dtype, or one element moved.
Tensor perturbed(const Tensor& t, uint8_t mode, uint64_t seed) {
  std::vector<int64_t> dims = t.shape().dims();
  const size_t d = dims.empty() ? 0 : (mode >> 3) % dims.size();
  switch (mode & 7) {
    case 4:
      if (dims.empty()) dims.push_back(1);
      dims[d] += 1;
      return filled(t.dtype(), Shape(dims), seed, mode);
    case 5:
      if (!dims.empty() && dims[d] > 0) dims[d] -= 1;
      return filled(t.dtype(), Shape(dims), seed, mode);
    case 6:
      return filled(t.dtype(), Shape{t.numel()}, seed, mode);
    case 7:
      return filled(other_dtype(t.dtype(), mode >> 3), t.shape(), seed, mode);
    case 3:
      if (is_floating(t.dtype()) && t.numel() > 0) {
        Tensor f = t.clone();
        const int64_t i = (mode >> 3) % t.numel();
        set_float(f, i, get_float(f, i) + 0.5);
        return f;
      }
      return t;
    default:
      return t;
  }
}

struct Side {
  std::vector<Tensor> inputs, outputs;
};

Side side_of(const std::vector<Tensor>& good_inputs, const std::vector<Tensor>& good_outputs, Bytes& b, uint64_t seed) {
  Side s;
  for (size_t k = 0; k < good_inputs.size(); ++k) s.inputs.push_back(perturbed(good_inputs[k], b.next(), seed + k));
  for (size_t k = 0; k < good_outputs.size(); ++k) s.outputs.push_back(perturbed(good_outputs[k], b.next(), seed + 100 + k));
  return s;
}

LayerSide layer_side(const std::string& line, const Side& s) {
  LayerSide l;
  l.line = line;
  l.outputs = s.outputs;
  for (size_t k = 0; k < s.outputs.size(); ++k) l.roles.push_back("out" + std::to_string(k));
  const std::vector<Tensor> in = s.inputs;
  l.inputs = [in] { return in; };
  return l;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool checked = (check_every_op_has_a_line(), true);
  (void)checked;
  Bytes b{data, size};
  const std::string& line = small_lines()[b.next() % small_lines().size()];
  const uint8_t flags = b.next();
  uint64_t seed = 0;
  for (size_t k = b.at; k < size && k < b.at + 8; ++k) seed = seed << 8 | data[k];
  const std::vector<Tensor> good_inputs = seeded_inputs(line, seed);
  const std::vector<Tensor> good_outputs = backend("ref").run(line, good_inputs);
  const Side a = side_of(good_inputs, good_outputs, b, seed);
  Side bb = side_of(good_inputs, good_outputs, b, seed + 1000);
  const bool same_inputs = (flags & 1) != 0;  // judge_layer's promise: then both sides ran on the same bytes
  if (same_inputs) bb.inputs = a.inputs;
  JudgeOptions o;
  o.precision = (flags & 2) ? Precision::Fp16 : Precision::Fp32;
  try {
    judge_layer("fuzz", layer_side(line, a), layer_side(line, bb), same_inputs, o);
  } catch (const Error&) {
    // Refused in one line: allowed.
  }
  return 0;
}
