// The judge for calls parity has no op for: a dump from parity_torch records them as `torch.<name>`
// with their tensors (in<i>=<shape>) and other arguments (arg<i>=<Python repr>). Those whose
// meaning the line fully gives are run again here in float64 on the CPU (LibTorch), on one side's
// own inputs, and the result rounded to the dtype PyTorch's type promotion gives: element-wise
// arithmetic (+ - * / ** in every spelling: method, operator, reflected, in place, torch.<fn>) and
// a few unary maps. Anything else, or an argument this cannot read for certain, is refused with
// the reason, and the layer stays judged by values only: never a guess.
#include <ATen/ops/abs.h>
#include <ATen/ops/add.h>
#include <ATen/ops/batch_norm.h>
#include <ATen/ops/div.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/log.h>
#include <ATen/ops/clamp_min.h>
#include <ATen/ops/max.h>
#include <ATen/ops/max_pool1d.h>
#include <ATen/ops/max_pool2d.h>
#include <ATen/ops/max_pool3d.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros_like.h>
#include <ATen/ops/isfinite.h>
#include <ATen/ops/maximum.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/nan_to_num.h>
#include <ATen/ops/neg.h>
#include <ATen/ops/nextafter.h>
#include <ATen/ops/full.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/relu.h>
#include <ATen/ScalarOps.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/sqrt.h>
#include <ATen/ops/sub.h>
#include <ATen/ops/tanh.h>

#include <ATen/TensorIndexing.h>
#include <ATen/TensorOperators.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "kernels/aten/torch_args.h"
#include "kernels/aten/torch_bounds.h"
#include "kernels/aten/torch_dispatch.h"
#include "kernels/torch_calls.h"
#include "kernels/aten/plugin.h"
#include "kernels/aten/util.h"

namespace parity {

namespace {

enum class Binary { Add, Sub, Mul, Div, Pow, Remainder, FloorDivide };
enum class Unary { Sigmoid, Exp, Neg, Sqrt, Abs, Tanh, Log, Relu };

struct Kind {
  std::optional<Binary> binary;
  std::optional<Unary> unary;
  bool reflected = false;  // __rsub__(x, c) is c - x
};

// The arithmetic calls run here (the table's rows flagged arithmetic, kernels/torch_calls.h), by
// the operator their row names.
std::optional<Kind> kind_of(const std::string& op) {
  static const std::map<std::string, Binary> binary = {
      {"add", Binary::Add}, {"sub", Binary::Sub}, {"mul", Binary::Mul}, {"div", Binary::Div}, {"pow", Binary::Pow},
      {"remainder", Binary::Remainder}, {"floor_divide", Binary::FloorDivide}};
  static const std::map<std::string, Unary> unary = {{"sigmoid", Unary::Sigmoid}, {"exp", Unary::Exp}, {"neg", Unary::Neg},
                                                     {"sqrt", Unary::Sqrt},       {"abs", Unary::Abs}, {"tanh", Unary::Tanh},
                                                     {"log", Unary::Log},         {"relu", Unary::Relu}};
  const TorchCall* call = torch_call(op);
  if (!call || !call->arithmetic) return std::nullopt;
  Kind k;
  k.reflected = call->reflected;
  if (const auto b = binary.find(call->aten); b != binary.end()) {
    k.binary = b->second;
  } else if (const auto u = unary.find(call->aten); u != unary.end() && !k.reflected) {
    k.unary = u->second;
  } else {
    throw Error("torch_calls.tsv: " + call->name + " is arithmetic on " + call->aten + ", which kernels/aten/torch_calls.cpp does not compute");
  }
  return k;
}

// The arithmetic and batch_norm calls' operands: a tensor, a number or None (a line of these only;
// the dispatcher's calls read theirs with torch_args.h's read_line).
struct NumberOperand {
  std::optional<size_t> tensor;  // index into the inputs
  std::optional<double> scalar;
  bool none = false;  // Python's None
  bool integral = false;  // a Python int (or bool): PyTorch's promotion treats it apart from a float
};

// The call's positional operands (in<i> or arg<i>, i = 0, 1, ...) and keyword fields.
struct NumberArgs {
  std::vector<NumberOperand> positional;
  std::map<std::string, std::string> keywords;     // other than tensors
  std::map<std::string, size_t> tensor_keywords;  // -> index into the inputs
};

// Keywords that take tensors in the calls run here.
const std::set<std::string> kTensorKeywords = {"weight", "bias", "running_mean", "running_var"};

NumberArgs read_number_args(const std::string& line, size_t tensors) {
  std::istringstream in(line);
  std::string word;
  in >> word;  // the op
  std::map<size_t, NumberOperand> by_position;
  size_t next_tensor = 0;
  NumberArgs a;
  static const std::regex positional(R"(^(in|arg)([0-9]+)=(.*)$)");
  while (in >> word) {
    std::smatch m;
    if (std::regex_match(word, m, positional)) {
      const size_t i = std::stoul(m[2]);
      NumberOperand o;
      if (m[1] == "in") {
        o.tensor = next_tensor++;
      } else if (m[3] == "None") {
        o.none = true;
      } else {
        o.scalar = python_number(m[3]);
        if (!o.scalar) throw Error("argument " + std::to_string(i) + " is not a number: " + std::string(m[3]));
        o.integral = integral_text(m[3]);
      }
      by_position[i] = o;
    } else {
      const size_t eq = word.find('=');
      if (eq == std::string::npos) throw Error("field '" + word + "' is not key=value");
      const std::string key = word.substr(0, eq), value = word.substr(eq + 1);
      // A tensor passed by keyword is recorded by its shape, before the other fields.
      static const std::regex shape(R"(^(scalar|[0-9]+(x[0-9]+)*)$)");
      if (kTensorKeywords.count(key) && std::regex_match(value, shape)) {
        a.tensor_keywords[key] = next_tensor++;
      } else {
        a.keywords[key] = value;
      }
    }
  }
  if (next_tensor != tensors) throw Error("the line names " + std::to_string(next_tensor) + " tensors, the layer has " + std::to_string(tensors));
  for (size_t i = 0; i < by_position.size(); ++i) {
    if (!by_position.count(i)) throw Error("argument " + std::to_string(i) + " is missing");
    a.positional.push_back(by_position[i]);
  }
  return a;
}

at::Tensor run_binary(Binary b, const at::Tensor& x, const at::Tensor& y, const at::Scalar& alpha) {
  switch (b) {
    case Binary::Add: return at::add(x, y, alpha);
    case Binary::Sub: return at::sub(x, y, alpha);
    case Binary::Mul: return at::mul(x, y);
    case Binary::Div: return at::div(x, y);
    case Binary::Pow: return at::pow(x, y);
    case Binary::Remainder: return at::remainder(x, y);
    case Binary::FloorDivide: return at::floor_divide(x, y);
  }
  throw Error("unknown binary op");
}

at::Tensor run_unary(Unary u, const at::Tensor& x) {
  switch (u) {
    case Unary::Sigmoid: return at::sigmoid(x);
    case Unary::Exp: return at::exp(x);
    case Unary::Neg: return at::neg(x);
    case Unary::Sqrt: return at::sqrt(x);
    case Unary::Abs: return at::abs(x);
    case Unary::Tanh: return at::tanh(x);
    case Unary::Log: return at::log(x);
    case Unary::Relu: return at::relu(x);
  }
  throw Error("unknown unary op");
}

// A Python number as PyTorch takes it: a "wrapped number", which does not widen a tensor's dtype
// of the same kind (float32 * 0.5 stays float32).
at::Tensor wrapped(const NumberOperand& o, std::optional<at::ScalarType> as = std::nullopt) {
  at::Tensor t = c10::scalar_to_tensor(o.integral ? at::Scalar(int64_t(*o.scalar)) : at::Scalar(*o.scalar));
  if (as) t = t.to(*as);
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

// F.batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
// momentum=0.1, eps=1e-05) in inference (training=False): per channel (dimension 1)
// (x - mean) / sqrt(var + eps) * weight + bias. In training mode with no running statistics (NFNet's
// weight standardisation, F.batch_norm(w.reshape(1, out, -1), None, None, training=True)) it
// normalises each channel by its own mean and deviation, updating nothing: judged as layer_norm
// is, K the channel's values plus 8. Training mode with running statistics updates them: refused.
TorchCallResult batch_norm_call(const NumberArgs& a, const std::vector<Tensor>& in) {
  static const char* kNames[] = {"input", "running_mean", "running_var", "weight", "bias", "training", "momentum", "eps"};
  if (a.positional.size() > 8) throw Error("batch_norm with " + std::to_string(a.positional.size()) + " arguments");
  for (const auto& [key, value] : a.keywords) {
    if (std::find(std::begin(kNames), std::end(kNames), key) == std::end(kNames)) throw Error("argument " + key + " of batch_norm is not one this reads");
  }
  auto tensor = [&](size_t pos) -> std::optional<size_t> {
    if (pos < a.positional.size()) {
      const NumberOperand& o = a.positional[pos];
      if (!o.tensor && !o.none) throw Error(std::string("batch_norm's ") + kNames[pos] + " is neither a tensor nor None");
      return o.tensor;
    }
    if (const auto it = a.tensor_keywords.find(kNames[pos]); it != a.tensor_keywords.end()) return it->second;
    if (const auto it = a.keywords.find(kNames[pos]); it != a.keywords.end() && it->second != "None") {
      throw Error(std::string("batch_norm's ") + kNames[pos] + " is neither a tensor nor None");
    }
    return std::nullopt;
  };
  auto value = [&](size_t pos, double fallback) {
    if (pos < a.positional.size()) {
      if (!a.positional[pos].scalar) throw Error(std::string("batch_norm's ") + kNames[pos] + " is not a number");
      return *a.positional[pos].scalar;
    }
    const auto it = a.keywords.find(kNames[pos]);
    if (it == a.keywords.end()) return fallback;
    const std::optional<double> v = python_number(it->second);
    if (!v) throw Error(std::string("batch_norm's ") + kNames[pos] + " is not a number: " + it->second);
    return *v;
  };
  const std::optional<size_t> x = tensor(0), mean = tensor(1), var = tensor(2), weight = tensor(3), bias = tensor(4);
  const bool training = value(5, 0) != 0;
  if (!x) throw Error("batch_norm without an input");
  if (training && (mean || var)) throw Error("batch_norm in training mode (it updates its statistics)");
  if (!training && (!mean || !var)) throw Error("batch_norm without running statistics");
  value(6, 0.1);  // momentum: read to refuse a non-number, unused in inference
  const double eps = value(7, 1e-5);
  return aten_call("batch_norm", [&] {
    aten_threads();
    auto f64 = [&](std::optional<size_t> i) { return i ? c10::optional<at::Tensor>(to_aten(in[*i]).to(at::kDouble)) : c10::optional<at::Tensor>(); };
    const at::Tensor input = to_aten(in[*x]), wide = input.to(at::kDouble);
    const at::Tensor r = at::batch_norm(wide, f64(weight), f64(bias), f64(mean), f64(var), training, 0.1, eps, false);
    TorchCallResult out{{from_aten(r.to(input.scalar_type()).contiguous())}, {}, {}};
    if (training && wide.dim() >= 2) {
      std::vector<int64_t> reduce = {0}, per_channel(size_t(wide.dim()), 1);
      for (int64_t d = 2; d < wide.dim(); ++d) reduce.push_back(d);
      per_channel[1] = wide.size(1);
      const c10::optional<at::Tensor> w = f64(weight), b = f64(bias);
      const at::Tensor S = normalisation_sums(wide, wide, reduce, eps, w ? w->abs().reshape(per_channel) : at::ones({}, wide.options()),
                                              b ? std::optional<at::Tensor>(b->abs().reshape(per_channel)) : std::nullopt, r);
      out.bound_sums.push_back(from_aten(S.contiguous()));
      out.bound_terms.push_back(wide.numel() / std::max<int64_t>(1, wide.size(1)) + 8);
    }
    return out;
  });
}

TorchCallResult arithmetic_call(const std::string& op, const Kind& kind, const std::string& line, const std::vector<Tensor>& in);

// The line's tensor fields (its first in.size() fields, in order, as the recorder writes them:
// `in0=64x49x96`, `weight=96`, `in1_0=2x3` in a list) against the tensors given: a dump whose
// line says one shape and whose file holds another is refused here, in one line, before LibTorch
// or a bound reads either.
// A field ending in "c" (`in0=2x12x2x4x2c`) is a complex tensor's real view (torch.view_as_real):
// which ones are is returned.
std::vector<bool> check_line_tensors(const std::string& line, const std::vector<Tensor>& in) {
  std::istringstream fields(line);
  std::string word;
  fields >> word;  // the op
  std::vector<bool> complex(in.size(), false);
  for (size_t k = 0; k < in.size(); ++k) {
    if (!(fields >> word)) throw Error("the line names fewer tensors than the layer's " + std::to_string(in.size()));
    const size_t eq = word.find('=');
    std::string said = eq == std::string::npos ? "" : word.substr(eq + 1);
    if (!said.empty() && said.back() == 'c') said.pop_back(), complex[k] = true;
    if (said != in[k].shape().str()) {
      throw Error("tensor " + std::to_string(k) + " (" + word.substr(0, eq) + ") is " + said + " in the line, its file holds " +
                  in[k].shape().str());
    }
  }
  return complex;
}

}  // namespace

}  // namespace parity

// The outputs of a recorded `torch.<name>` call on `in` (its tensors in recorded order), computed
// in float64 and rounded to the promoted dtype; throws parity::Error saying why a call is not one
// this runs (the judge then reports the layer by values only, with that reason).
parity::TorchCallResult parity::aten_torch_call(const std::string& line, const std::vector<parity::Tensor>& in) {
  using namespace parity;
  std::istringstream first(line);
  std::string op;
  first >> op;
  const std::vector<bool> complex = check_line_tensors(line, in);
  const TorchCall* known = torch_call(op);
  if (std::find(complex.begin(), complex.end(), true) != complex.end() || (known && (known->bound == TorchBound::Fourier || known->complex_out))) {
    return complex_torch_call(op, line, in, complex);  // complex tensors in or out
  }
  if (op == "torch.nn.functional.batch_norm") return batch_norm_call(read_number_args(line, in.size()), in);
  const std::optional<Kind> kind = kind_of(op);
  if (!kind) {  // any other operator LibTorch has, where a bound is known
    try {
      return dispatch_torch_call(op, line, in);
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {  // a number in the line past int64 (std::stoll), a bad_alloc: said, not raised past
      throw Error(op + ": " + e.what());
    }
  }
  try {
    return arithmetic_call(op, *kind, line, in);
  } catch (const Error& arithmetic_refused) {
    // An argument the arithmetic does not read (div's rounding_mode): the dispatcher may, by
    // schema. When it cannot either, the arithmetic's reason is the one worth reading.
    try {
      return dispatch_torch_call(op, line, in);
    } catch (const Error&) {
      throw arithmetic_refused;
    }
  }
}

parity::TorchCallResult parity::aten_torch_call_computed_in(const std::string& line, const std::vector<parity::Tensor>& in,
                                                            parity::JudgeCompute compute) {
  using namespace parity;
  const at::ScalarType types[] = {at::kDouble, at::kFloat, at::kHalf, at::kBFloat16};
  const JudgeComputeScope scope(types[static_cast<int>(compute)]);
  return aten_torch_call(line, in);
}

namespace {

// roi_align works out where to sample in its input's dtype: the box scaled, split into bins, a
// sample's place in its bin, a few roundings each of numbers up to the box's far edge. Nudging
// the boxes (below) moves every sample of a bin together, and their slopes may cancel in the bin's
// mean; each sample's own rounding does not. So this allowance is the coordinates' error bound
// times the feature map's slope at each sample, averaged as the call averages its samples:
// roi_align itself run on the map G of the largest difference between neighbours around each
// pixel (G at a cell's corners bounds the bilinear slope anywhere in the cell). Undefined where it
// does not apply.
at::Tensor sample_rounding_allowance(const std::string& line, const std::vector<parity::Tensor>& in) {
  using namespace parity;
  if (in.size() < 2 || in[0].shape().rank() != 4 || in[1].shape().rank() != 2 || in[1].shape()[1] != 5) return {};
  const at::Tensor f = to_aten(in[0]).to(at::kDouble), rois = to_aten(in[1]).to(at::kDouble);
  const int64_t h = f.size(2), w = f.size(3);
  if (h < 2 || w < 2 || rois.size(0) == 0) return {};
  static const std::regex scale_field(R"( (arg2|spatial_scale)=([-+0-9.eE]+)( |$))");
  std::smatch m;
  if (!std::regex_search(line, m, scale_field)) return {};
  const double scale = std::fabs(std::strtod(m[2].str().c_str(), nullptr));
  using at::indexing::Slice;
  const at::Tensor dy = (f.index({Slice(), Slice(), Slice(1), Slice()}) - f.index({Slice(), Slice(), Slice(0, -1), Slice()})).abs();
  const at::Tensor dx = (f.index({Slice(), Slice(), Slice(), Slice(1)}) - f.index({Slice(), Slice(), Slice(), Slice(0, -1)})).abs();
  // Each cell's four edges, then each pixel the largest over the cells it is a corner of.
  const at::Tensor cell = at::maximum(at::maximum(dy.index({Slice(), Slice(), Slice(), Slice(0, -1)}), dy.index({Slice(), Slice(), Slice(), Slice(1)})),
                                      at::maximum(dx.index({Slice(), Slice(), Slice(0, -1), Slice()}), dx.index({Slice(), Slice(), Slice(1), Slice()})));
  const at::Tensor g = at::max_pool2d(cell, {2, 2}, {1, 1}, {1, 1});
  const TorchCallResult slope = aten_torch_call(line, {from_aten(g.contiguous()), in[1]});
  if (slope.outputs.empty()) return {};
  // Eight roundings (the box scaled, its size, the bin size, a sample's offset, the sums) of
  // numbers no larger than the box's farthest edge, scaled, or the map's (a sample past it counts
  // nothing).
  const double u = in[0].dtype() == DType::Float64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
  const at::Tensor reach = at::clamp_min(std::get<0>(rois.index({Slice(), Slice(1)}).abs().max(1)) * scale, double(std::max(h, w))) + 1;
  const at::Tensor out = to_aten(slope.outputs[0]).to(at::kDouble);
  return (out * (reach * (2 * 8 * u)).view({-1, 1, 1, 1})).contiguous();
}

// Linear, bilinear, trilinear and bicubic interpolation: a kernel works out each output's source
// position (scale, offset, the fraction between neighbours) in float32, or, on a half-precision
// CPU run, PyTorch 1.13 in the input's own type, so a position of up to the input's size is off by
// a few units of that (bfloat16: a quarter pixel at 64, and linear1d came out 4 times off;
// float32: 1e-4 of a pixel at 240, beyond a bicubic resize's tolerance on an image). The output
// then moves by at most that error, 4 units of (size + 1) along each axis (the scale, its product
// with the index and the offset, each rounded, and the weights from the fraction), times the slope
// between the inputs it mixes: for the linear modes, the call itself run on the map G of the
// largest difference between neighbours around each input (every edge of every cell a pixel is a
// corner of: G interpolated bounds the slope anywhere in a cell, as for roi_align); for bicubic,
// whose weights take both signs, 6.5 times G taken over 5 x 5 pixels and interpolated bilinearly
// (its 4 x 4 taps lie within 2 pixels of the 2 x 2 nearest; sum |w'| <= 3 along an axis, times half
// the 3 steps the taps span, times sum |w| <= 1.375 along the other); grid_sample's bilinear mode
// as the linear ones, G sampled on the same grid. Undefined for other calls, or with no unit given.
at::Tensor sampling_position_allowance(const std::string& line, const std::vector<parity::Tensor>& in, double sample_unit) {
  using namespace parity;
  std::string op;
  std::istringstream(line) >> op;
  const std::string name = torch_call_name(op);
  const bool cubic = name == "upsample_bicubic2d";
  // grid_sample's bilinear mode (arg2=0) places its samples from the grid as a resize does from
  // the scale: ((g + 1) w - 1) / 2 in float32. Its nearest and bicubic modes are not allowed for.
  static const std::regex bilinear_grid(R"( arg2=0( |$))");
  const bool grid = name == "grid_sampler" && in.size() > 1 && std::regex_search(line, bilinear_grid);
  if (sample_unit <= 0 || in.empty() ||
      (!cubic && !grid && name != "upsample_linear1d" && name != "upsample_bilinear2d" && name != "upsample_trilinear3d")) {
    return {};
  }
  const at::Tensor x = to_aten(in[0]).to(at::kDouble);
  const int64_t axes = x.dim() - 2;
  if (axes < 1 || axes > 3) return {};
  at::Tensor g = at::zeros_like(x);
  int64_t reach = 1;
  for (int64_t d = 2; d < x.dim(); ++d) {
    reach = std::max(reach, x.size(d));
    if (x.size(d) < 2) continue;
    const at::Tensor step = (x.narrow(d, 1, x.size(d) - 1) - x.narrow(d, 0, x.size(d) - 1)).abs();
    // Each input the larger of its steps along d (the first and last have one).
    g.narrow(d, 0, x.size(d) - 1).copy_(at::maximum(g.narrow(d, 0, x.size(d) - 1), step));
    g.narrow(d, 1, x.size(d) - 1).copy_(at::maximum(g.narrow(d, 1, x.size(d) - 1), step));
  }
  const double position = 4 * sample_unit * double(reach + 1) * double(axes);
  // The edges across each axis too: every pixel takes the largest over its neighbourhood.
  if (cubic) {
    g = at::max_pool2d(g, {5, 5}, {1, 1}, {2, 2});
  } else {
    g = axes == 1 ? at::max_pool1d(g, {3}, {1}, {1}) : axes == 2 ? at::max_pool2d(g, {3, 3}, {1, 1}, {1, 1}) : at::max_pool3d(g, {3, 3, 3}, {1, 1, 1}, {1, 1, 1});
  }
  std::vector<Tensor> on_g = in;
  on_g[0] = from_aten(g.to(to_aten(in[0]).scalar_type()).contiguous());
  // Bicubic's G interpolated bilinearly (weights of one sign), at the same places: the same call
  // with bilinear2d's name, whose arguments are the same.
  const std::string bilinear = cubic ? std::regex_replace(line, std::regex("upsample_bicubic2d"), "upsample_bilinear2d") : line;
  const TorchCallResult slope = aten_torch_call(bilinear, on_g);
  if (slope.outputs.empty()) return {};
  return to_aten(slope.outputs[0]).to(at::kDouble) * (position * (cubic ? 6.5 : 1));
}

}  // namespace

namespace {

// Every element a whole number no float type rounds (|v| <= 2^24).
bool whole_numbers(const parity::Tensor& t) {
  return parity::aten_call("whole numbers", [&] {
    const at::Tensor x = parity::to_aten(t);
    return x.numel() > 0 && (x == x.round()).all().item<bool>() && x.abs().le(16777216.0).all().item<bool>();
  });
}

}  // namespace

std::vector<parity::Tensor> parity::aten_torch_call_rounding(
    const std::string& line, const std::vector<parity::Tensor>& in, const std::vector<parity::Tensor>& base_outputs, double sample_unit) {
  using namespace parity;
  const TorchCallResult base{base_outputs, {}, {}};  // the call's outputs on `in`, as the judge has them
  std::vector<at::Tensor> moved_by(base.outputs.size());
  std::vector<at::Tensor> step_lo(base.outputs.size()), step_hi(base.outputs.size());  // integer outputs'
  // Where to sample (roi_align's boxes, grid_sample's grid) goes through several roundings in a
  // float32 kernel before it is used (scaled, split into bins, offset): 8 units, not 1.
  std::string op;
  std::istringstream(line) >> op;
  const TorchCall* call = torch_call(op);
  const bool samples = call && call->samples;
  // A step function of its input (div with a rounding mode, remainder: number_in_type) jumps at
  // a step on one side of the recorded value only: the value the run held, rounded to float32
  // when written, may lie on either side of it (4.3 / 0.1 is 43 in float32, 42 in float64).
  const bool steps = call && call->number_in_type;
  for (size_t k = 0; k < in.size(); ++k) {
    if (in[k].dtype() != DType::Float32 && in[k].dtype() != DType::Float64) continue;
    // A float input of whole numbers (a loss's ±1 or 0/1 targets, a mask) was rounded by no run
    // that wrote it; nudged, a label compared with 1 moves the result by anything (and passed a
    // wrong hinge loss).
    if (whole_numbers(in[k])) continue;
    const bool sampled = samples && k == sampled_input(torch_call_name(op));
    const double units = sampled ? 8 : 1;
    // roi_pool rounds where its bins start and end: a box the run held on one side of a bin's edge
    // may be written, or computed, on the other, and the nudge that shows it may be either way.
    const bool both_ways = steps || (sampled && call->bound == TorchBound::Exact);
    // Input k one unit up, and where that leaves the function's domain (erfinv at the largest
    // float below 1: 1 gives inf), one unit down.
    const auto moved = [&](double toward) {
      std::vector<Tensor> nudged = in;
      nudged[k] = aten_call("nextafter", [&] {
        const at::Tensor x = to_aten(in[k]);
        return from_aten(at::nextafter(x, at::full({}, toward, x.options())).contiguous());
      });
      return aten_torch_call(line, nudged);
    };
    const TorchCallResult up = moved(INFINITY);
    std::optional<TorchCallResult> down;
    bool down_refused = false;
    for (size_t j = 0; j < base.outputs.size() && j < up.outputs.size(); ++j) {
      if (up.outputs[j].shape() != base.outputs[j].shape()) continue;
      const at::Tensor was = to_aten(base.outputs[j]).to(at::kDouble);
      if (!is_floating(base.outputs[j].dtype())) {
        // An integer or bool output (searchsorted's indices, x > y) moves in steps, and only
        // toward where a nudge takes it: where its inputs were rounded when written, the value
        // the run held may lie on either side of a step. Its envelope, below and above the
        // judge's answer, summed over the inputs; one unit down only where that runs.
        const at::Tensor moved_up = to_aten(up.outputs[j]).to(at::kDouble) - was;
        at::Tensor lo = at::clamp_max(moved_up, 0), hi = at::clamp_min(moved_up, 0);
        if (!down && !down_refused) {
          try {
            down = moved(-INFINITY);
          } catch (const Error&) {
            down_refused = true;
          }
        }
        if (down && j < down->outputs.size() && down->outputs[j].shape() == base.outputs[j].shape()) {
          const at::Tensor moved_down = to_aten(down->outputs[j]).to(at::kDouble) - was;
          lo = at::minimum(lo, moved_down), hi = at::maximum(hi, moved_down);
        }
        step_lo[j] = step_lo[j].defined() ? step_lo[j] + lo : lo;
        step_hi[j] = step_hi[j].defined() ? step_hi[j] + hi : hi;
        continue;
      }
      at::Tensor d = (to_aten(up.outputs[j]).to(at::kDouble) - was).abs();
      const at::Tensor lost = ~d.isfinite() & was.isfinite();
      if (lost.any().item<bool>() || both_ways) {
        if (!down) down = moved(-INFINITY);
        if (j < down->outputs.size() && down->outputs[j].shape() == base.outputs[j].shape()) {
          const at::Tensor below = (to_aten(down->outputs[j]).to(at::kDouble) - was).abs();
          d = at::where(lost, below, both_ways ? at::maximum(d, below) : d);
        }
      }
      d = d * units;
      moved_by[j] = moved_by[j].defined() ? moved_by[j] + d : d;
    }
  }
  // Where the kernel samples moves with its own rounding whatever its inputs hold: an image of whole
  // numbers (0..255 as a float) or integer boxes, which no nudge above moves, gets it too (a
  // correct float32 bilinear resize of such an image was named defective against float64).
  const auto sampling = [&]() -> at::Tensor& {
    if (!moved_by[0].defined()) moved_by[0] = at::zeros(to_aten(base.outputs[0]).sizes(), at::kDouble);
    return moved_by[0];
  };
  const bool first_floating = !base.outputs.empty() && is_floating(base.outputs[0].dtype());
  if (samples && (torch_call_name(op) == "roi_align" || torch_call_name(op) == "ps_roi_align") && first_floating) {
    const at::Tensor each = sample_rounding_allowance(line, in);
    if (each.defined() && each.sizes() == to_aten(base.outputs[0]).sizes()) sampling() = sampling() + each / 2;  // doubled below
  }
  if (const at::Tensor each = sampling_position_allowance(line, in, sample_unit); each.defined() && first_floating &&
      each.dim() == int64_t(base.outputs[0].shape().rank())) {
    sampling() = sampling() + each.expand(to_aten(base.outputs[0]).sizes()) / 2;  // doubled below
  }
  std::vector<Tensor> out(base.outputs.size());
  for (size_t j = 0; j < out.size(); ++j) {
    if (moved_by[j].defined()) out[j] = from_aten((moved_by[j] * 2).nan_to_num(0, 0, 0).contiguous());
    if (step_lo[j].defined()) out[j] = from_aten(at::stack({step_lo[j], step_hi[j]}, -1).contiguous());
  }
  return out;
}

std::string parity::aten_tied_indices(const std::string& line,
                                                                                      const std::vector<parity::Tensor>& in,
                                                                                      const std::vector<parity::Tensor>& outputs) {
  parity::check_line_tensors(line, in);
  return parity::tied_indices_check(line.substr(0, line.find(' ')), line, in, outputs);
}

namespace parity {
namespace {

// Element-wise arithmetic and the unary maps, with PyTorch's type promotion.
// Binary float arithmetic also gives its bound's S, the same operation on magnitudes (|x| + |a||y|
// for add and sub, |x y|, |x / y|) with K = 1: a reduced-precision run rounds a Python number to
// the tensor's dtype before using it (0.229 / 0.5 as bfloat16), which the dtype's relative
// tolerance misses where the result is near zero; the profile's operand rounding covers it.
TorchCallResult arithmetic_call(const std::string& op, const Kind& kind_found, const std::string& line, const std::vector<Tensor>& in) {
  const std::optional<Kind> kind = kind_found;
  NumberArgs args = read_number_args(line, in.size());
  if (!args.tensor_keywords.empty()) throw Error(op + " with a tensor passed by keyword");
  at::Scalar alpha(int64_t(1));
  for (const auto& [key, value] : args.keywords) {
    const std::optional<double> a = python_number(value);
    if (key == "inplace" && a && kind->unary) continue;  // F.relu(x, inplace=True): the recorded input is the value before
    if (key != "alpha" || !a || !kind->binary || (*kind->binary != Binary::Add && *kind->binary != Binary::Sub)) {
      throw Error("argument " + key + "=" + value + " of " + op + " is not one this reads");
    }
    alpha = *python_scalar(value);
  }
  // F.relu(x, True): the second positional is `inplace`.
  if (kind->unary && op.rfind("torch.nn.functional.", 0) == 0 && args.positional.size() == 2 && args.positional[1].scalar &&
      args.positional[1].integral) {
    args.positional.pop_back();
  }
  const size_t arity = kind->binary ? 2 : 1;
  if (args.positional.size() != arity) throw Error(op + " with " + std::to_string(args.positional.size()) + " operands");
  for (const NumberOperand& o : args.positional) {
    if (o.none) throw Error(op + " with None as an operand");
  }
  return aten_call(op.c_str(), [&] {
    aten_threads();
    std::vector<at::Tensor> tensors;
    for (const Tensor& t : in) tensors.push_back(to_aten(t));
    auto run = [&](const std::function<at::Tensor(const NumberOperand&)>& operand) {
      if (!kind->binary) return run_unary(*kind->unary, operand(args.positional[0]));
      const at::Tensor x = operand(args.positional[0]), y = operand(args.positional[1]);
      return kind->reflected ? run_binary(*kind->binary, y, x, alpha) : run_binary(*kind->binary, x, y, alpha);
    };
    // The result's dtype is PyTorch's own answer on one element of each operand (a 0-dim tensor
    // stays 0-dim: it promotes differently from a dimensioned one).
    const at::ScalarType out = run([&](const NumberOperand& o) {
                                 if (!o.tensor) return wrapped(o);
                                 const at::Tensor& t = tensors[*o.tensor];
                                 return t.dim() == 0 ? t : t.flatten().slice(0, 0, std::min<int64_t>(1, t.numel()));
                               }).scalar_type();
    // Floats are computed in float64 (judge_float_type) and rounded once; integers and bools
    // exactly in their dtype.
    const bool floating = at::isFloatingType(out);
    const at::Tensor r = run([&](const NumberOperand& o) {
      if (!o.tensor) return floating ? wrapped(o, judge_float_type()) : wrapped(o);
      return floating ? tensors[*o.tensor].to(judge_float_type()) : tensors[*o.tensor];
    });
    TorchCallResult result;
    result.outputs.push_back(from_aten(r.to(out).contiguous()));
    // A sum, product or quotient strays by roundings of its operands' sizes; a step function
    // (remainder, floor_divide) is judged at the dtype's tolerance, and again with its numbers
    // rounded as a kernel rounds them (number_in_type, compare/local_check.cpp).
    const bool sized = kind->binary && *kind->binary != Binary::Pow && *kind->binary != Binary::Remainder &&
                       *kind->binary != Binary::FloorDivide;
    if (floating && sized) {
      const auto magnitude = [&](const NumberOperand& o) { return (o.tensor ? tensors[*o.tensor].to(at::kDouble) : wrapped(o, at::kDouble)).abs(); };
      const at::Tensor mx = magnitude(args.positional[0]), my = magnitude(args.positional[1]);
      const Binary b = *kind->binary == Binary::Sub ? Binary::Add : *kind->binary;
      const at::Scalar a = alpha.isIntegral(false) ? at::Scalar(std::abs(alpha.toLong())) : at::Scalar(std::abs(alpha.toDouble()));
      const at::Tensor S = kind->reflected ? run_binary(b, my, mx, a) : run_binary(b, mx, my, a);
      result.bound_sums.push_back(from_aten(S.expand_as(r).contiguous()));
      result.bound_terms.push_back(1);
    }
    return result;
  });
}

}  // namespace
}  // namespace parity
