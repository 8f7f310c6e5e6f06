// Re-running a recorded call through LibTorch's dispatcher: the call's Python name is mapped to an
// ATen operator, the line's arguments are bound to one of its overloads' schema (the tensors as
// float64, the rest parsed from Python's repr), and the operator runs on the CPU. Only operators
// whose correct float32 results parity can bound are run: those that move or select values
// (exact), element-wise maps (a few roundings: the default tolerance), and those that sum K terms
// (a per-element bound, as conv2d's). Anything else stays judged by values only, saying why.
#include "kernels/aten/torch_dispatch.h"

#include <ATen/TensorIndexing.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/real.h>
#include <ATen/ops/view_as_complex.h>
#include <ATen/ops/view_as_real.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/where.h>

#include <cmath>
#include <map>
#include <optional>
#include <regex>

#include "core/error.h"
#include "kernels/aten/torch_args.h"
#include "kernels/aten/torch_bounds.h"
#include "kernels/aten/util.h"
#include "kernels/torch_calls.h"

namespace parity {

namespace {

// A call's tensors as recorded, and as the judge runs them: floats widened to float64 (or taken as
// float32 kernels take them: judge_float_type).
struct Operands {
  std::vector<at::Tensor> given, wide;
};
Operands operands(const std::vector<Tensor>& in) {
  Operands o;
  for (const Tensor& t : in) {
    o.given.push_back(to_aten(t));
    o.wide.push_back(o.given.back().is_floating_point() ? o.given.back().to(judge_float_type()) : o.given.back());
  }
  return o;
}

// Whether every value of `t` (float32) is one float16 holds, or every one is one bfloat16 holds:
// a kernel that takes it to that type rounds nothing.
bool on_a_half_grid(const at::Tensor& t) {
  return t.to(at::kHalf).to(t.scalar_type()).equal(t) || t.to(at::kBFloat16).to(t.scalar_type()).equal(t);
}

// F.scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
// scale=None, enable_gqa=False), which torch 2's MultiheadAttention and transformers call, and its
// fused CUDA kernels (flash, memory-efficient, cuDNN) run: softmax(q k^T scale + mask) v in
// float64, on any LibTorch (1.13 has no such operator). A row whose keys are all masked gives 0,
// as PyTorch 2.5 on does. The bound, with P the weights, E and L the head and key lengths and M_i
// the largest sum_e |q_ie k_je| of query i: a score moves by (E + 2) u_sum of scale M_i (its dot
// product), and by 2 u_in of it more where q and k are not yet in a half type (a kernel rounds
// them); a weight then relatively by 2.2 times that (twice, exp's curvature included up to 0.1),
// and by L + 1 roundings of the sum it is divided by; the output by sum_j P_ij |v_j| times those,
// plus its own sum over L keys, v and P rounded to the type (the fused kernels round P before the
// second product), and float16's subnormal P (2^-25 each, whatever its size). With K = max(2L + 1,
// E): S = P|v| (1 + 2.2 scale M c) + 2^-15 sum |v|, c = 1 where q or k is off every half grid,
// else (E + 2) / (K + 2).
TorchCallResult attention_call(const std::string& op, const std::string& line, const std::vector<Tensor>& in) {
  const Args args = read_line(line, in.size());
  const std::string dropout = text_arg(args, 4, "dropout_p");
  if (!dropout.empty() && python_number(dropout).value_or(1) != 0) throw Error(op + " with dropout draws random numbers");
  const std::string causal = text_arg(args, 5, "is_causal"), scale_text = text_arg(args, 6, "scale"), gqa = text_arg(args, 7, "enable_gqa");
  return aten_call(op.c_str(), [&] {
    const auto [given, wide] = operands(in);
    const std::optional<at::Tensor> q = tensor_arg(args, wide, 0, "query"), k = tensor_arg(args, wide, 1, "key"),
                                    v = tensor_arg(args, wide, 2, "value"), mask = tensor_arg(args, wide, 3, "attn_mask");
    if (!q || !k || !v || q->dim() < 2 || k->dim() < 2 || v->dim() < 2) throw Error(op + " without its query, key and value recorded");
    const int64_t E = q->size(-1);
    if (E == 0) throw Error(op + " with an empty head dimension");
    at::Tensor key = *k, value = *v;
    if (gqa == "True" && q->dim() >= 3 && key.dim() >= 3 && key.size(-3) != q->size(-3)) {
      // Grouped-query attention: each key head serves q_heads / k_heads query heads.
      if (key.size(-3) == 0 || q->size(-3) % key.size(-3) != 0 || value.dim() < 3 || value.size(-3) != key.size(-3)) {
        throw Error(op + " with enable_gqa: " + std::to_string(q->size(-3)) + " query heads are no multiple of " + std::to_string(key.size(-3)) +
                    " key heads");
      }
      key = key.repeat_interleave(q->size(-3) / key.size(-3), -3);
      value = value.repeat_interleave(q->size(-3) / value.size(-3), -3);
    }
    const int64_t L = key.size(-2);
    const double scale = scale_text.empty() || scale_text == "None" ? 1 / std::sqrt(double(E)) : python_number(scale_text).value_or(NAN);
    if (!std::isfinite(scale)) throw Error(op + "'s scale= is not a number in the line");
    at::Tensor scores = q->matmul(key.transpose(-2, -1)) * scale;
    at::Tensor allowed;  // where a key may be attended to; undefined: everywhere
    if (causal == "True") allowed = at::ones({q->size(-2), L}, at::TensorOptions().dtype(at::kBool)).tril();
    if (mask && mask->scalar_type() == at::kBool) {
      allowed = allowed.defined() ? allowed.logical_and(*mask) : *mask;
    } else if (mask) {
      scores = scores + *mask;
    }
    if (allowed.defined()) scores = scores.masked_fill(allowed.logical_not(), -INFINITY);
    const at::Tensor none_allowed = std::get<0>(scores.max(-1, true)) == -INFINITY;  // every key masked
    const at::Tensor weights = scores.softmax(-1).masked_fill(none_allowed, 0);
    const at::Tensor y = weights.matmul(value);
    const at::Tensor reach = std::get<0>(q->abs().matmul(key.abs().transpose(-2, -1)).max(-1, true));  // M_i
    const int64_t K = std::max(2 * L + 1, E);
    const std::optional<at::Tensor> q32 = tensor_arg(args, given, 0, "query"), k32 = tensor_arg(args, given, 1, "key");
    const bool rounded_already = q32->is_floating_point() && on_a_half_grid(*q32) && on_a_half_grid(*k32);
    const double c = rounded_already ? double(E + 2) / double(K + 2) : 1.0;
    TorchCallResult r;
    const at::Tensor S = weights.matmul(value.abs()) * (1 + 2.2 * std::fabs(scale) * c * reach) +
                         std::ldexp(1.0, -15) * value.abs().sum(-2, true);
    r.bound_sums.push_back(from_aten(S.expand_as(y).contiguous()));
    r.bound_terms.push_back(K);
    r.outputs.push_back(from_aten(y.to(q32->scalar_type()).contiguous()));
    return r;
  });
}

// torch 2.4's F.rms_norm(input, normalized_shape, weight=None, eps=None), written out in float64
// (LibTorch before 2.4 has no such operator): y = x / sqrt(mean x^2 + eps) * w over the trailing
// dims normalized_shape names. Its rounding: the mean of K squares (positive terms) off by K units
// relatively, the root and the products by a few: S = (|z| + 1) |w| + |y| with z = x / s bounds
// them (K + 8 of them, as layer_norm's). eps=None means the epsilon of the type the kernel works
// in, which the line does not say (a float32 kernel on half inputs, or the half type's own): such
// a call is refused, not judged with a guess.
TorchCallResult rms_norm_call(const std::string& op, const std::string& line, const std::vector<Tensor>& in) {
  const Args args = read_line(line, in.size());
  const std::string eps_text = text_arg(args, 3, "eps");
  if (eps_text.empty() || eps_text == "None") throw Error(op + " with eps=None: its epsilon is that of the type its kernel works in, which the line does not say");
  const std::optional<double> eps = python_number(eps_text);
  if (!eps || !std::isfinite(*eps) || *eps < 0) throw Error(op + "'s eps is not a number in the line");
  const auto shape = int_list(text_arg(args, 1, "normalized_shape"));
  if (!shape) throw Error(op + "'s normalized_shape is not recorded as a list");
  return aten_call(op.c_str(), [&] {
    const auto [given, wide] = operands(in);
    const std::optional<at::Tensor> x = tensor_arg(args, wide, 0, "input"), w = tensor_arg(args, wide, 2, "weight");
    const std::optional<at::Tensor> x_given = tensor_arg(args, given, 0, "input");
    if (!x || !x->is_floating_point()) throw Error(op + " without its floating input recorded");
    const int64_t dims = int64_t(shape->size());
    if (dims > x->dim()) throw Error(op + ": normalized_shape has more dims than its input");
    std::vector<int64_t> reduce;
    int64_t K = 1;
    for (int64_t d = x->dim() - dims; d < x->dim(); ++d) {
      if (x->size(d) != (*shape)[size_t(d - (x->dim() - dims))]) throw Error(op + ": normalized_shape is not its input's trailing shape");
      reduce.push_back(d);
      K *= x->size(d);
    }
    const at::Tensor s = (x->pow(2).mean(reduce, true) + *eps).sqrt();
    const at::Tensor z = *x / s;
    const at::Tensor weight = w ? *w : at::ones({}, x->options());
    const at::Tensor y = z * weight;
    TorchCallResult r;
    r.bound_sums.push_back(from_aten(((z.abs() + 1) * weight.abs() + y.abs()).expand_as(y).contiguous()));
    r.bound_terms.push_back(K + 8);
    r.outputs.push_back(from_aten(y.to(x_given->scalar_type()).contiguous()));
    return r;
  });
}

}  // namespace

TorchCallResult dispatch_torch_call(const std::string& op, const std::string& line, const std::vector<Tensor>& in) {
  const std::string name = call_name(op);
  const TorchCall* known = torch_call(op);
  if (name == "getitem" || name == "setitem") {
    const Args args = read_line(line, in.size());
    return aten_call(op.c_str(), [&] {
      std::vector<at::Tensor> tensors;
      for (const Tensor& t : in) tensors.push_back(to_aten(t));  // selects and copies: exact in any dtype
      TorchCallResult r;
      for (const at::Tensor& y : run_index(name == "setitem", args, tensors)) r.outputs.push_back(from_aten(y.contiguous()));
      return r;
    });
  }
  if (name == "tensor" && in.empty()) {  // torch.tensor(0.25): the constant made again from the line
    const Args args = read_line(line, 0);
    const std::optional<Literal> lit = args.positional.size() == 1 ? python_literal(args.positional[0].text) : std::nullopt;
    if (!lit) throw Error("torch.tensor of data that is not numbers in the line");
    std::optional<at::ScalarType> dtype;
    if (const auto it = args.keywords.find("dtype"); it != args.keywords.end() && it->second.text != "None") {
      dtype = scalar_type(it->second.text);
      if (!dtype) throw Error("torch.tensor with dtype " + it->second.text);
    }
    return aten_call(op.c_str(), [&] {
      const at::ScalarType made = dtype ? *dtype : lit->all_bool ? at::kBool : lit->any_float ? at::kFloat : at::kLong;
      const at::Tensor t = at::tensor(lit->values, at::TensorOptions().dtype(at::kDouble)).reshape(lit->shape).to(made);
      TorchCallResult r;
      r.outputs.push_back(from_aten(t.contiguous()));
      return r;
    });
  }
  if (name == "to" || name == "type" || name == "type_as") {
    const Args args = read_line(line, in.size());
    if (args.positional.empty() || !args.positional[0].tensor) throw Error("a cast of no recorded tensor");
    const at::Tensor x = to_aten(in.at(*args.positional[0].tensor));
    std::optional<at::ScalarType> to;  // x.to(dtype), x.to(device, dtype), x.to(other), x.type(dtype): the first that names one
    for (size_t i = 1; i < args.positional.size() && !to; ++i) {
      const Operand& o = args.positional[i];
      to = o.tensor ? std::optional<at::ScalarType>(to_aten(in.at(*o.tensor)).scalar_type()) : scalar_type(o.text);
    }
    if (const auto it = args.keywords.find("dtype"); it != args.keywords.end() && !to) to = scalar_type(it->second.text);
    return aten_call(op.c_str(), [&] {
      TorchCallResult r;
      r.outputs.push_back(from_aten(to ? x.to(*to) : x.clone()));  // one rounding at most; no dtype named: a copy
      return r;
    });
  }
  if (known && known->cast && !known->dtype.empty()) {  // x.long(), x.float(): the dtype its name gives
    const Args args = read_line(line, in.size());
    if (args.positional.size() != 1 || !args.positional[0].tensor) throw Error("a cast with other arguments");
    const std::optional<at::ScalarType> dtype = scalar_type("torch." + known->dtype);
    if (!dtype) throw Error("torch_calls.tsv: " + name + " casts to " + known->dtype + ", not a dtype LibTorch names");
    return aten_call(op.c_str(), [&] {
      TorchCallResult r;
      r.outputs.push_back(from_aten(to_aten(in.at(*args.positional[0].tensor)).to(*dtype)));  // one rounding at most
      return r;
    });
  }
  if (known && known->bound == TorchBound::Attention) return attention_call(op, line, in);
  if (known && known->bound == TorchBound::RmsNorm) return rms_norm_call(op, line, in);
  if (!known || known->aten.empty()) {
    throw Error("parity cannot run " + op + " again: no error bound for it is known here (python/parity_torch/torch_calls.tsv)");
  }
  Args args = read_line(line, in.size());
  drop_placement(args);
  // F.softmax(input, dim, _stacklevel, dtype): its third is Python's own.
  if (op == "torch.nn.functional.softmax" && args.positional.size() > 2) args.positional.erase(args.positional.begin() + 2);
  args.keywords.erase("_stacklevel");
  if (args.keywords.count("inplace")) args.keywords.erase("inplace");
  // F.max_pool2d(x, 2, return_indices=True) is recorded as max_pool2d_with_indices, whose operator
  // returns the indices always: the flag is Python's (UNCHECKED before: no overload took it).
  if (const std::string suffix = "_with_indices"; name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
    args.keywords.erase("return_indices");
  }
  // Losses as torch.nn.functional calls them: the reduction by its name, where ATen takes its
  // number (kl_div's batchmean: the sum, then over the batch, as F.kl_div does it in Python).
  std::string reduction;
  if (const auto it = args.keywords.find("reduction"); it != args.keywords.end() && !it->second.tensor) {
    static const std::map<std::string, std::string> numbers = {
        {"'none'", "0"}, {"'mean'", "1"}, {"'sum'", "2"}, {"'batchmean'", "2"}, {"'elementwise_mean'", "1"}};
    reduction = it->second.text;
    const auto n = numbers.find(reduction);
    if (n == numbers.end()) throw Error(op + ": reduction=" + reduction + " is not one PyTorch names");
    it->second.text = n->second;
  }
  // A window function made in the run's dtype is the judge's made in float64.
  if (known->bound == TorchBound::Window) args.keywords["dtype"] = Operand{std::nullopt, {}, "torch.float64"};
  // x.where(condition, y): ATen's where takes the condition first, as torch.where does.
  if (op == "torch.Tensor.where" && args.positional.size() >= 2) std::swap(args.positional[0], args.positional[1]);
  // torch.cdist's compute_mode by name (a Python function); ATen's by number: None where matrix
  // products are used if necessary, 1 always, 2 never.
  if (name == "cdist") {
    Operand* mode = args.keywords.count("compute_mode") ? &args.keywords["compute_mode"] : args.positional.size() > 3 ? &args.positional[3] : nullptr;
    static const std::map<std::string, std::string> modes = {
        {"'use_mm_for_euclid_dist_if_necessary'", "None"}, {"'use_mm_for_euclid_dist'", "1"}, {"'donot_use_mm_for_euclid_dist'", "2"}};
    if (mode && modes.count(mode->text)) mode->text = modes.at(mode->text);
  }
  // F.rrelu(x, lower, upper, training=False): in eval, leaky_relu with the mean of its slopes.
  if (name == "rrelu") {
    if (text_arg(args, 3, "training") == "True") throw Error(op + " in training mode is random: its generator's state is not recorded");
    const double lower = python_number(text_arg(args, 1, "lower")).value_or(1.0 / 8), upper = python_number(text_arg(args, 2, "upper")).value_or(1.0 / 3);
    if (args.positional.empty() || !args.positional[0].tensor) throw Error(op + "'s input is not recorded");
    std::ostringstream slope;
    slope.precision(17);
    slope << (lower + upper) / 2;
    args.positional.resize(1);
    args.positional.push_back(Operand{std::nullopt, {}, slope.str()});
    args.keywords.clear();
  }
  // x.norm(p='fro', dim=...): Python's spelling of the 2-norm over those dims; aten::norm takes a number.
  if (name == "norm") {
    Operand* p = args.keywords.count("p") ? &args.keywords["p"] : args.positional.size() > 1 ? &args.positional[1] : nullptr;
    if (p && !p->tensor && (p->text == "'fro'" || p->text == "\"fro\"")) p->text = "2";
    // dim=None (x.norm(), every element): the overload without a dim, which takes no keepdim.
    if (const auto it = args.keywords.find("dim"); it != args.keywords.end() && it->second.text == "None") {
      args.keywords.erase(it);
      if (const auto kd = args.keywords.find("keepdim"); kd != args.keywords.end() && kd->second.text == "False") args.keywords.erase(kd);
    }
  }
  // F.unfold and F.fold: Python's defaults, which their operators (im2col, col2im) do not have.
  if (name == "unfold" || name == "fold") {
    const size_t first = name == "fold" ? 3 : 2;  // (input, [output_size,] kernel_size, dilation, padding, stride)
    const char* keys[] = {"dilation", "padding", "stride"};
    const char* values[] = {"1", "0", "1"};
    for (size_t k = 0; k < 3; ++k) {
      if (args.positional.size() <= first + k && !args.keywords.count(keys[k])) args.keywords[keys[k]] = Operand{std::nullopt, {}, values[k]};
    }
  }
  return aten_call(op.c_str(), [&] {
    const auto [given, wide] = operands(in);
    std::optional<at::ScalarType> floating;  // the floats' dtype as given: results are rounded to it
    for (const at::Tensor& a : given) {
      if (a.is_floating_point() && !floating) floating = a.scalar_type();
    }
    std::vector<at::Tensor> out = run_op(op, known->aten, args, wide);
    // F.adaptive_max_pool2d(x, size) returns the values; its operator, the indices too (a call
    // with return_indices=True is recorded as adaptive_max_pool2d_with_indices).
    if (name.rfind("adaptive_max_pool", 0) == 0 && name.find("with_indices") == std::string::npos && out.size() > 1) out.resize(1);
    if (reduction == "'batchmean'" && wide.at(0).dim() > 0 && !out.empty()) out[0] = out[0] / double(wide[0].size(0));
    if (known->first_output && out.size() > 1) out.resize(1);  // the rest: its kernel's bookkeeping, not recorded
    // torch.unique and unique_consecutive return the inverse and the counts only where asked; their
    // operators, always.
    if ((name == "unique" || name == "unique_consecutive") && out.size() == 3) {
      const size_t at = name == "unique" ? 2 : 1;  // unique(x, sorted, return_inverse, ...), unique_consecutive(x, return_inverse, ...)
      std::vector<at::Tensor> asked{out[0]};
      if (text_arg(args, at, "return_inverse") == "True") asked.push_back(out[1]);
      if (text_arg(args, at + 1, "return_counts") == "True") asked.push_back(out[2]);
      out = asked;
    }
    TorchCallResult r;
    TorchBound bound = known->bound;
    // index_put(..., accumulate=True) adds what repeated indices put onto one element: a sum.
    // So does put(index, source, accumulate=True).
    if ((name == "index_put" || name == "put") && text_arg(args, 3, "accumulate") == "True") bound = TorchBound::Sum;
    // scatter_reduce(self, dim, index, src, reduce): its largest or smallest is one of the values.
    const std::string reduce = text_arg(args, 4, "reduce");
    if (name == "scatter_reduce" && (reduce == "'amax'" || reduce == "'amin'")) bound = TorchBound::Exact;
    if (bound != TorchBound::None && bound != TorchBound::Exact && bound != TorchBound::Rounded) {
      for (const at::Tensor& y : out) {
        at::Tensor S;
        int64_t K = 0;
        if (!y.is_floating_point()) {
          r.bound_sums.emplace_back();
          r.bound_terms.push_back(0);
          continue;
        }
        if (bound == TorchBound::Sum) {
          std::vector<at::Tensor> magnitudes;
          for (const at::Tensor& t : wide) magnitudes.push_back(t.is_floating_point() ? t.abs() : t);
          if (known->samples) magnitudes.at(sampled_input(name)) = wide.at(sampled_input(name));  // where to sample stays: only the values' signs go
          const Args sizes = magnitude_args(args);
          if (name == "cross") {
            S = cross_sums(args, wide);
          } else if (name == "affine_grid") {
            S = affine_grid_sums(wide, y);
          } else if ((name == "upsample_bicubic2d" || name == "_upsample_bicubic2d_aa") && wide.at(0).dim() == 4) {
            // Cubic convolution's weights (A = -0.75; -0.5 antialiased) take both signs: the call on
            // |x| bounds nothing. Each output mixes inputs of its plane with sum |w| <= 1.375 along
            // each axis: S = 1.375^2 times the plane's largest |x|.
            S = std::get<0>(wide[0].abs().flatten(2).max(2, true)).unsqueeze(3) * (1.375 * 1.375);
          } else {
            S = run_op(op, known->aten, sizes, magnitudes).at(0);
          }
          K = sum_terms(name, args, wide, y);
        } else if (bound == TorchBound::Softmax) {
          const auto it = args.keywords.find("dim");
          const std::string dim = it != args.keywords.end() ? it->second.text : args.positional.size() > 1 ? args.positional[1].text : "";
          if (!integral_text(dim)) throw Error("softmax's dim is not recorded");
          K = y.size(std::stoll(dim)) + 4;
          S = y.abs();
        } else if (bound == TorchBound::LogSoftmax || bound == TorchBound::LogSumExp || bound == TorchBound::Cosine) {
          // Over a dim of K: log_softmax's y = x - m - log(sum exp(x - m)) is off by a few
          // roundings of |y| (|x - m| <= |y|) and K of the log's sum (absolute), and by one of
          // |x| + max |x| where its inputs were rounded (a float64 run written as float32: the
          // nudged re-run moves them all at once, which log_softmax does not see); logsumexp's by
          // those of |y| and |m| <= |y| + log K; cosine similarity's (a dot product over two
          // norms) by K + 4 roundings of at most 1 (Cauchy-Schwarz) and of |y|.
          int64_t n = 1;  // the terms each output element reduces over
          at::Tensor rounding;  // log_softmax: what its inputs' rounding moves it by, in units of u, over K + 2
          if (bound == TorchBound::LogSoftmax) {
            const std::string dim = text_arg(args, 1, "dim");
            const at::Tensor& x = wide.at(0);
            const int64_t d = integral_text(dim) ? std::stoll(dim) : x.dim();
            if (x.dim() == 0 || d < -x.dim() || d >= x.dim()) throw Error(name + "'s dim is not recorded");
            n = x.size(d);
            rounding = (x.abs() + std::get<0>(x.abs().max(d, true))) / double(n + 4);
          } else if (bound == TorchBound::Cosine) {  // the broadcast inputs' size along dim
            const std::string dim = text_arg(args, 2, "dim");
            const int64_t rank = y.dim() + 1, d0 = dim.empty() ? 1 : integral_text(dim) ? std::stoll(dim) : 1;
            const int64_t d = d0 < 0 ? d0 + rank : d0;
            for (const at::Tensor& t : wide) {
              const int64_t at_dim = d - (rank - t.dim());
              if (t.is_floating_point() && at_dim >= 0 && at_dim < t.dim()) n = std::max<int64_t>(n, t.size(at_dim));
            }
          } else if (name == "logcumsumexp") {  // up to all of its dim
            n = wide.at(0).dim() > 0 ? wide[0].size(dim_arg(args, 1, "dim", wide[0], std::nullopt, name)) : 1;
          } else {  // logsumexp over one or several dims: input elements per output element
            n = std::max<int64_t>(1, wide.at(0).numel() / std::max<int64_t>(1, y.numel()));
          }
          K = n + 2;
          S = y.abs() + 1.0 + (bound == TorchBound::LogSumExp ? std::log(double(n)) : 0.0);
          if (rounding.defined()) S = S + rounding;
        } else if (bound == TorchBound::LayerNorm) {
          S = layer_norm_sums(args, wide, y, K);
          K += 8;
        } else if (bound == TorchBound::GroupNorm) {
          S = group_norm_sums(name, args, wide, y, K);
          K += 8;
        } else if (bound == TorchBound::Moments) {
          S = moment_sums(name, args, wide.at(0), y, size_t(&y - out.data()), K);
        } else if (bound == TorchBound::Positive) {
          S = positive_sums(name, args, wide, y, K);
        } else if (bound == TorchBound::LogLoss) {
          S = log_loss_sums(name, args, reduction, wide, y, K);
        } else if (bound == TorchBound::LossTerms) {
          S = loss_term_sums(name, args, reduction, wide, y, K);
        } else if (bound == TorchBound::OneAndOutput) {
          // Near a zero of its own (logit at 1/2, lgamma at 1 and 2, digamma's, sinc's at the
          // integers) a correct kernel strays by a few roundings of its terms, of size 1.
          S = 1.0 + y.abs();
          K = 4;
        } else if (bound == TorchBound::Window) {
          // cos of 2 pi k / N (hann, hamming, blackman; kaiser's ratio of Bessel functions): a few
          // roundings of the angle (at most 2 pi) and of the value (at most 1).
          S = at::full_like(y, 2 * M_PI + 1);
          K = 4;
        } else if (bound == TorchBound::Steps) {
          K = recurrent_steps(name, args, wide.at(0));
          S = std::sqrt(double(K)) * (y.abs() + y.pow(2).mean().sqrt());
        } else {
          S = wide.at(0).abs() + y.abs();
          K = 4;
        }
        r.bound_sums.push_back(from_aten(S.expand_as(y).to(at::kDouble).contiguous()));
        r.bound_terms.push_back(K);
      }
    }
    for (at::Tensor& y : out) {
      if (y.is_floating_point() && floating) y = y.to(*floating);
      r.outputs.push_back(from_aten(y.contiguous()));
    }
    return r;
  });
}


TorchCallResult complex_torch_call(const std::string& op, const std::string& line, const std::vector<Tensor>& in,
                                   const std::vector<bool>& complex) {
  const std::string name = call_name(op);
  const TorchCall* known = torch_call(op);
  const bool index = name == "getitem" || name == "setitem";
  if (!index && (!known || known->aten.empty())) {
    throw Error("parity cannot run " + op + " again: no error bound for it is known here (python/parity_torch/torch_calls.tsv)");
  }
  const TorchBound bound = index ? TorchBound::Exact : known->bound;
  if (bound != TorchBound::Exact && bound != TorchBound::Rounded && bound != TorchBound::Sum && bound != TorchBound::Fourier) {
    throw Error("parity cannot run " + op + " again on complex tensors: no bound for them is known here");
  }
  Args args = read_line(line, in.size());
  drop_placement(args);
  return aten_call(op.c_str(), [&] {
    std::vector<at::Tensor> wide;
    at::ScalarType run_type = at::kComplexDouble;  // complex64 unless every complex input is complex128
    std::optional<at::ScalarType> real_type;       // the real outputs': the real inputs' float dtype
    for (size_t k = 0; k < in.size(); ++k) {
      at::Tensor t = to_aten(in[k]);
      if (k < complex.size() && complex[k]) {
        if (!t.is_floating_point() || t.dim() == 0 || t.size(-1) != 2) throw Error(op + ": tensor " + std::to_string(k) + " is no complex tensor's real view");
        if (t.scalar_type() != at::kDouble) run_type = at::kComplexFloat;
        wide.push_back(at::view_as_complex(t.to(at::kDouble).contiguous()));
      } else {
        if (t.is_floating_point() && !real_type) real_type = t.scalar_type();
        wide.push_back(t.is_floating_point() ? t.to(at::kDouble) : t);
      }
    }
    const std::vector<at::Tensor> out = index ? run_index(name == "setitem", args, wide) : run_op(op, known->aten, args, wide);
    std::vector<at::Tensor> sums;  // Sum: the call on the inputs' moduli
    if (bound == TorchBound::Sum) {
      std::vector<at::Tensor> moduli;
      for (const at::Tensor& t : wide) moduli.push_back(t.is_complex() || t.is_floating_point() ? t.abs() : t);
      sums = run_op(op, known->aten, magnitude_args(args), moduli);
    }
    TorchCallResult r;
    for (size_t k = 0; k < out.size(); ++k) {
      const at::Tensor& y = out[k];
      at::Tensor S;
      int64_t K = 0;
      if (bound == TorchBound::Rounded && (y.is_complex() || y.is_floating_point())) {
        S = y.abs(), K = 4;
      } else if (bound == TorchBound::Sum && (y.is_complex() || y.is_floating_point()) && k < sums.size()) {
        S = sums[k].abs(), K = sum_terms(name, args, wide, y) + 2;
      } else if (bound == TorchBound::Fourier && y.is_floating_point() && name == "istft") {
        S = istft_sums(args, wide, y, K);
      } else if (bound == TorchBound::Fourier && (y.is_complex() || y.is_floating_point()) && (name == "stft" || y.dim() == wide.at(0).dim())) {
        // A fast transform of N points strays by a few times log2 N roundings of its output's
        // 2-norm (norm-wise, so in every bin: a bin's error is the spread of every term's
        // rounding, the largest term's included), each transform on its own: S is the norm over the
        // transformed dims, that of the full spectrum where the output is half of one (rfft,
        // ihfft: at most sqrt(2) times the half's). PyTorch's CPU transforms stayed within 0.23 of
        // K = 2 ceil(log2 N) + 8 roundings of it, N from 8 to 65536, primes included.
        // stft(input, n_fft, hop_length, win_length, window, normalized, onesided, return_complex):
        // a transform of n_fft windowed points per frame, along its frequencies (the real view's
        // pairs too where return_complex=False), half a spectrum where onesided (a real input's
        // default).
        std::vector<int64_t> dims;
        int64_t points = 1;
        bool half = false;
        if (name == "stft") {
          const std::string n_fft = text_arg(args, 1, "n_fft");
          if (!integral_text(n_fft) || y.dim() < (y.is_complex() ? 2 : 3)) throw Error("stft's n_fft or output is not recorded as one");
          dims = y.is_complex() ? std::vector<int64_t>{y.dim() - 2} : std::vector<int64_t>{y.dim() - 3, y.dim() - 1};
          points = std::stoll(n_fft);
          half = text_arg(args, 6, "onesided") != "False" && !wide[0].is_complex();
        } else {
          dims = fourier_dims(name, args, y.dim());
          for (const int64_t d : dims) points *= std::max(y.size(d), wide[0].size(d));
          half = (name.find("rfft") != std::string::npos && name.find("irfft") == std::string::npos) || name.find("ihfft") != std::string::npos;
        }
        S = (y.abs().pow(2).sum(dims, true).sqrt() * (half ? std::sqrt(2.0) : 1.0)).expand(y.sizes());
        K = 2 * int64_t(std::ceil(std::log2(double(std::max<int64_t>(2, points))))) + 8;
      }
      const at::Tensor written = y.is_complex() ? at::view_as_real(y.to(run_type).resolve_conj()) : y.is_floating_point() && real_type ? y.to(*real_type) : y;
      if (S.defined()) {
        if (y.is_complex()) S = S.unsqueeze(-1);
        r.bound_sums.push_back(from_aten(S.to(at::kDouble).expand_as(written).contiguous()));
        r.bound_terms.push_back(K);
      } else {
        r.bound_sums.emplace_back();
        r.bound_terms.push_back(0);
      }
      r.outputs.push_back(from_aten(written.contiguous()));
    }
    return r;
  });
}

std::string tied_indices_check(const std::string& op, const std::string& line, const std::vector<Tensor>& in,
                               const std::vector<Tensor>& outputs) {
  const TorchCall* known = torch_call(op);
  if (!known || !known->tied) throw Error(op + " is not a sort, topk, median or cummax");
  const std::string name = known->name;
  const Args args = read_line(line, in.size());
  // sort and argsort(input, dim=-1, descending=False), topk(input, k, dim=-1, largest=True,
  // sorted=True), kthvalue(input, k, dim=-1, keepdim=False), median and nanmedian(input, dim,
  // keepdim=False), cummax and cummin(input, dim): the indices are the last output.
  const bool sorts = name == "sort" || name == "argsort" || name == "topk";
  const bool running = name == "cummax" || name == "cummin";
  const size_t dim_at = name == "topk" || name == "kthvalue" ? 2 : 1;
  std::string dim = text_arg(args, dim_at, "dim");
  if (dim.empty() && (sorts || name == "kthvalue")) dim = "-1";
  if (in.empty() || outputs.empty() || outputs.size() > 2) throw Error(op + ": its outputs are not recorded in full");
  if (name != "argsort" && outputs.size() != 2) throw Error(op + " returned no indices");  // median(x): judged as any output
  if (!integral_text(dim)) throw Error(op + ": its dim is not recorded");
  return aten_call(op.c_str(), [&] {
    const at::Tensor x = to_aten(in[0]), indices = to_aten(outputs.back());
    const int64_t d = x.dim() == 0 ? 0 : (std::stoll(dim) % x.dim() + x.dim()) % x.dim();
    if (indices.scalar_type() != at::kLong) return std::string("its indices are not int64");
    const int64_t size = x.dim() == 0 ? 1 : x.size(d);
    if (indices.numel() > 0 && (indices.min().item<int64_t>() < 0 || indices.max().item<int64_t>() >= size)) {
      return std::string("an index is out of range");
    }
    const bool kept = sorts || running || text_arg(args, dim_at + 1, "keepdim") == "True" || indices.dim() == x.dim();
    const at::Tensor at_dim = x.dim() == 0 || kept ? indices : indices.unsqueeze(d);
    if (x.dim() > 0 && at_dim.dim() != x.dim()) return std::string("its indices do not have its input's rank");
    const at::Tensor gathered = x.dim() == 0 ? x.expand_as(indices) : x.gather(d, at_dim);
    const at::Tensor picked = gathered.dim() == indices.dim() ? gathered : gathered.squeeze(d);
    const auto equal = [](const at::Tensor& a, const at::Tensor& b) { return (a == b) | (a.isnan() & b.isnan()); };  // NaN equals NaN
    if (outputs.size() == 2) {
      const at::Tensor values = to_aten(outputs[0]);
      if (values.sizes() != indices.sizes()) return std::string("its indices are not of its values' shape");
      if (!equal(picked.to(values.scalar_type()), values).all().item<bool>()) return std::string("its indices do not pick the values it returned");
    }
    if (running && x.dim() > 0) {  // cummax's index at a position is that position's or an earlier one's
      std::vector<int64_t> shape(size_t(x.dim()), 1);
      shape[size_t(d)] = size;
      if (!indices.le(at::arange(size, indices.options()).view(shape)).all().item<bool>()) return std::string("an index lies after its position");
    }
    if (!sorts || x.dim() == 0 || indices.size(d) < 2) return std::string();
    // Each element once: a repeated index picks a tied value twice and leaves another out.
    const at::Tensor ordered = std::get<0>(indices.sort(d));
    if (!(ordered.narrow(d, 1, ordered.size(d) - 1) - ordered.narrow(d, 0, ordered.size(d) - 1)).ne(0).all().item<bool>()) {
      return std::string("an index appears twice");
    }
    if (name == "topk") return std::string();  // its order is its values', judged bit for bit
    // argsort's order: each value no larger than the next (NaN above every number), or no smaller
    // when descending (sort's is its values', judged bit for bit); tied values in the order of their
    // indices when stable.
    const at::Tensor a = picked.narrow(d, 0, size - 1), b = picked.narrow(d, 1, size - 1);
    const bool descending = text_arg(args, 2, "descending") == "True";
    const at::Tensor in_order = descending ? (a.isnan() | (~b.isnan() & a.ge(b))) : (b.isnan() | (~a.isnan() & a.le(b)));
    if (name == "argsort" && !in_order.all().item<bool>()) return std::string("its indices do not order its input");
    if (text_arg(args, 99, "stable") == "True") {
      const at::Tensor tied = equal(a, b);
      const at::Tensor rising = indices.narrow(d, 1, size - 1).gt(indices.narrow(d, 0, size - 1));
      if (!(rising | ~tied).all().item<bool>()) return std::string("it is stable, and tied values are not in the order of their indices");
    }
    return std::string();
  });
}

}  // namespace parity

