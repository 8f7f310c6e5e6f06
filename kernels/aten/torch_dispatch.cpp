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
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <regex>
#include <sstream>

#include "core/error.h"
#include "kernels/aten/util.h"
#include "kernels/torch_calls.h"

namespace parity {

std::optional<double> python_number(const std::string& text) {
  if (text == "True") return 1.0;
  if (text == "False") return 0.0;
  static const std::regex numeric(R"(^-?(inf|nan|[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?)$)");
  if (!std::regex_match(text, numeric)) return std::nullopt;
  return std::strtod(text.c_str(), nullptr);  // reads inf and nan too
}

bool integral_text(const std::string& t) {
  return python_number(t) && t != "True" && t != "False" && t.find_first_of(".eEn") == std::string::npos;
}

std::optional<c10::Scalar> python_scalar(const std::string& text) {
  const std::optional<double> v = python_number(text);
  if (!v) return std::nullopt;
  return integral_text(text) ? c10::Scalar(int64_t(*v)) : c10::Scalar(*v);
}

namespace {

// A recorded argument: a tensor (index into the call's tensors), a list of tensors, or the text
// Python's repr gave a value (spaces removed).
struct Operand {
  std::optional<size_t> tensor;
  std::vector<size_t> tensor_list;
  std::string text;
};

struct Args {
  std::vector<Operand> positional;
  std::map<std::string, Operand> keywords;
};

// The line lists the call's tensors first, in recorded order (in<i>, in<i>_<j> for a list's
// items, a keyword's name), then its other arguments (arg<i>, keywords).
Args read_line(const std::string& line, size_t tensors) {
  std::istringstream in(line);
  std::string word;
  in >> word;
  std::map<size_t, Operand> by_position;
  Args a;
  size_t seen = 0;
  static const std::regex positional(R"(^(in|arg)([0-9]+)(_([0-9]+))?=(.*)$)");
  while (in >> word) {
    const size_t eq = word.find('=');
    if (eq == std::string::npos) throw Error("field '" + word + "' is not key=value");
    const bool is_tensor = seen < tensors;
    std::smatch m;
    if (std::regex_match(word, m, positional)) {
      const size_t i = std::stoul(m[2]);
      if ((m[1] == "in") != is_tensor) throw Error("field '" + word + "' is out of order");
      Operand& o = by_position[i];
      if (!is_tensor) {
        o.text = m[5];
      } else if (m[3].matched) {
        o.tensor_list.push_back(seen++);
      } else {
        o.tensor = seen++;
      }
    } else {
      Operand& o = a.keywords[word.substr(0, eq)];
      if (is_tensor) {
        o.tensor = seen++;
      } else {
        o.text = word.substr(eq + 1);
      }
    }
  }
  if (seen != tensors) throw Error("the line names " + std::to_string(seen) + " tensors, the layer has " + std::to_string(tensors));
  for (size_t i = 0; i < by_position.size(); ++i) {
    if (!by_position.count(i)) throw Error("argument " + std::to_string(i) + " is missing");
    a.positional.push_back(by_position[i]);
  }
  return a;
}

// "(1,2)", "[1,2]", "torch.Size([1,2])", "()" or one integer: a list of integers.
std::optional<std::vector<int64_t>> int_list(const std::string& t) {
  if (integral_text(t)) return std::vector<int64_t>{std::stoll(t)};
  static const std::regex list(R"(^(torch\.Size\()?[\[(]((-?[0-9]+,)*-?[0-9]*),?[\])]\)?$)");
  std::smatch m;
  if (!std::regex_match(t, m, list)) return std::nullopt;
  std::vector<int64_t> out;
  std::istringstream items(m[2]);
  std::string item;
  while (std::getline(items, item, ',')) {
    if (!item.empty()) out.push_back(std::stoll(item));
  }
  return out;
}

// "[2.0,2.0]", "(1.5,)" or one number: a list of floats.
std::optional<std::vector<double>> float_list(const std::string& t) {
  if (const auto v = python_number(t); v && t != "True" && t != "False") return std::vector<double>{*v};
  if (t.size() < 2 || !((t.front() == '[' && t.back() == ']') || (t.front() == '(' && t.back() == ')'))) return std::nullopt;
  std::vector<double> out;
  std::istringstream items(t.substr(1, t.size() - 2));
  std::string item;
  while (std::getline(items, item, ',')) {
    if (item.empty()) continue;
    const auto v = python_number(item);
    if (!v || item == "True" || item == "False") return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

std::optional<at::ScalarType> scalar_type(const std::string& t) {
  static const std::map<std::string, at::ScalarType> m = {
      {"torch.float32", at::kFloat}, {"torch.float", at::kFloat},   {"torch.float64", at::kDouble}, {"torch.double", at::kDouble},
      {"torch.float16", at::kHalf},  {"torch.half", at::kHalf},     {"torch.bfloat16", at::kBFloat16}, {"torch.int64", at::kLong},
      {"torch.long", at::kLong},     {"torch.int32", at::kInt},     {"torch.int", at::kInt},        {"torch.int16", at::kShort},
      {"torch.int8", at::kChar},     {"torch.uint8", at::kByte},    {"torch.bool", at::kBool}};
  const auto it = m.find(t);
  return it == m.end() ? std::nullopt : std::optional<at::ScalarType>(it->second);
}

// The value of `o` as schema type `type` takes it; nullopt when it cannot be that.
std::optional<c10::IValue> value_as(const Operand& o, const c10::TypePtr& type, const std::vector<at::Tensor>& tensors) {
  using K = c10::TypeKind;
  if (type->kind() == K::OptionalType) {
    if (!o.tensor && o.tensor_list.empty() && o.text == "None") return c10::IValue();
    return value_as(o, type->castRaw<c10::OptionalType>()->getElementType(), tensors);
  }
  if (type->kind() == K::TensorType) return o.tensor ? std::optional<c10::IValue>(tensors[*o.tensor]) : std::nullopt;
  if (type->kind() == K::ListType) {
    const c10::TypePtr item = type->castRaw<c10::ListType>()->getElementType();
    if (item->kind() == K::TensorType) {
      if (o.tensor_list.empty()) return std::nullopt;
      std::vector<at::Tensor> list;
      for (const size_t i : o.tensor_list) list.push_back(tensors[i]);
      return c10::IValue(list);
    }
    // Tensor?[] (index_put's indices): a list of tensors, none of them None.
    if (item->kind() == K::OptionalType && item->castRaw<c10::OptionalType>()->getElementType()->kind() == K::TensorType) {
      if (o.tensor_list.empty()) return std::nullopt;
      c10::List<c10::optional<at::Tensor>> list;
      for (const size_t i : o.tensor_list) list.push_back(tensors[i]);
      return c10::IValue(list);
    }
    if (item->kind() == K::IntType || item->kind() == K::SymIntType) {
      const auto ints = o.tensor || !o.tensor_list.empty() ? std::nullopt : int_list(o.text);
      return ints ? std::optional<c10::IValue>(c10::IValue(*ints)) : std::nullopt;
    }
    if (item->kind() == K::FloatType) {
      const auto floats = o.tensor || !o.tensor_list.empty() ? std::nullopt : float_list(o.text);
      return floats ? std::optional<c10::IValue>(c10::IValue(*floats)) : std::nullopt;
    }
    return std::nullopt;
  }
  if (o.tensor || !o.tensor_list.empty()) return std::nullopt;
  switch (type->kind()) {
    case K::IntType:
    case K::SymIntType:
      if (!integral_text(o.text)) return std::nullopt;
      return c10::IValue(int64_t(std::stoll(o.text)));
    case K::FloatType: {
      const auto v = python_number(o.text);
      return v && o.text != "True" && o.text != "False" ? std::optional<c10::IValue>(c10::IValue(*v)) : std::nullopt;
    }
    case K::BoolType:
      if (o.text != "True" && o.text != "False") return std::nullopt;
      return c10::IValue(o.text == "True");
    case K::NumberType: {
      const std::optional<c10::Scalar> v = python_scalar(o.text);
      return v ? std::optional<c10::IValue>(c10::IValue(*v)) : std::nullopt;
    }
    case K::StringType:
      if (o.text.size() < 2 || (o.text.front() != '\'' && o.text.front() != '"') || o.text.back() != o.text.front()) return std::nullopt;
      return c10::IValue(o.text.substr(1, o.text.size() - 2));
    case K::ScalarTypeType: {
      const auto st = scalar_type(o.text);
      return st ? std::optional<c10::IValue>(c10::IValue(*st)) : std::nullopt;
    }
    default:
      return std::nullopt;  // a device, a layout, a memory format: placed by keyword, dropped before
  }
}

bool random_op(const c10::FunctionSchema& s) {
  for (const c10::Argument& a : s.arguments()) {
    const c10::TypePtr& t = a.real_type();
    if (t->kind() == c10::TypeKind::GeneratorType) return true;
    if (t->kind() == c10::TypeKind::OptionalType && t->castRaw<c10::OptionalType>()->getElementType()->kind() == c10::TypeKind::GeneratorType) {
      return true;
    }
  }
  return false;
}

bool tensor_list_type(const c10::TypePtr& type) {
  return type->kind() == c10::TypeKind::ListType && type->castRaw<c10::ListType>()->getElementType()->kind() == c10::TypeKind::TensorType;
}

bool int_list_type(const c10::TypePtr& type) {
  if (type->kind() != c10::TypeKind::ListType) return false;
  const c10::TypeKind item = type->castRaw<c10::ListType>()->getElementType()->kind();
  return item == c10::TypeKind::IntType || item == c10::TypeKind::SymIntType;
}

// One integer given for an int list of fixed size N (int[2] kernel_size): N of it, as Python's
// _pair makes; nullopt for anything else.
std::optional<c10::IValue> repeated_int(const c10::Argument& a, const Operand& o) {
  if (!int_list_type(a.real_type()) || !a.N() || *a.N() < 2 || o.tensor || !o.tensor_list.empty() || !integral_text(o.text)) {
    return std::nullopt;
  }
  return c10::IValue(std::vector<int64_t>(size_t(*a.N()), std::stoll(o.text)));
}

// The stack for schema `s` from the call's arguments, or nullopt when they do not fit it. Python's
// varargs (x.view(2, 3), x.permute(0, 2, 1)) fill an int list of no fixed size; one int given for
// a list of fixed size N is N of it (avg_pool2d(x, 2), adaptive_avg_pool2d(x, 1): Python's
// _pair); Python's `input` is ATen's `self`.
std::optional<torch::jit::Stack> bind(const c10::FunctionSchema& s, Args args, const std::vector<at::Tensor>& tensors) {
  torch::jit::Stack stack;
  size_t next = 0;
  if (args.keywords.count("input") && !args.keywords.count("self")) {
    args.keywords["self"] = args.keywords["input"];
    args.keywords.erase("input");
  }
  for (const c10::Argument& a : s.arguments()) {
    const c10::TypePtr& type = a.real_type();
    std::optional<c10::IValue> v;
    if (!a.kwarg_only() && next < args.positional.size()) {
      const bool ints = int_list_type(type);
      const Operand& given = args.positional[next];
      if ((v = repeated_int(a, given))) {
        ++next;
      } else if (ints && !a.N() && next + 1 < args.positional.size() && integral_text(given.text)) {
        std::vector<int64_t> packed;
        for (; next < args.positional.size() && integral_text(args.positional[next].text); ++next) packed.push_back(std::stoll(args.positional[next].text));
        v = c10::IValue(packed);
      } else if (tensor_list_type(type) && given.tensor) {  // einsum(eq, a, b): Python's tensors as the list
        std::vector<at::Tensor> packed;
        for (; next < args.positional.size() && args.positional[next].tensor; ++next) packed.push_back(tensors[*args.positional[next].tensor]);
        v = c10::IValue(packed);
      } else {
        v = value_as(args.positional[next++], type, tensors);
      }
    } else if (const auto it = args.keywords.find(a.name()); it != args.keywords.end()) {
      v = repeated_int(a, it->second);
      if (!v) v = value_as(it->second, type, tensors);
      args.keywords.erase(it);
    } else if (a.default_value()) {
      v = *a.default_value();
    }
    if (!v) return std::nullopt;
    stack.push_back(std::move(*v));
  }
  // A keyword the schema lacks, given as None, is Python's default for it (torch.norm's out=None,
  // dtype=None): nothing to pass; so is return_indices=False (F.adaptive_max_pool2d's, whose
  // operator returns its indices always: dispatch_torch_call keeps the values only).
  for (const auto& [key, given] : args.keywords) {
    if (key == "return_indices" && given.text == "False") continue;
    if (given.tensor || !given.tensor_list.empty() || given.text != "None") return std::nullopt;
  }
  if (next != args.positional.size()) return std::nullopt;
  return stack;
}

// The dispatcher's operator names, read once each: ATen's, and (`libraries`) all of them, read
// the first time after a library (the only one loaded here, torchvision's) registered its own.
const std::vector<c10::OperatorName>& op_names(bool libraries) {
  if (!libraries) {
    static const std::vector<c10::OperatorName> aten = c10::Dispatcher::singleton().getAllOpNames();
    return aten;
  }
  static const std::vector<c10::OperatorName> all = c10::Dispatcher::singleton().getAllOpNames();
  return all;
}

// Runs the first overload of `name` the arguments bind to; its outputs, tensors or lists of them
// flattened in order.
std::vector<at::Tensor> run_op(const std::string& op, const std::string& name, const Args& args, const std::vector<at::Tensor>& tensors) {
  // `name`: an ATen operator, or one qualified by its library (torchvision::roi_align), which
  // registers it when loaded: the names are read after that.
  const bool qualified = name.find("::") != std::string::npos;
  if (qualified && name.rfind("torchvision::", 0) == 0 && !torchvision_library().loaded) {
    throw Error("torchvision's library is not loaded here (" + torchvision_library().why_not + ")");
  }
  const std::string full = qualified ? name : "aten::" + name;
  std::vector<const c10::OperatorName*> overloads;
  for (const c10::OperatorName& n : op_names(qualified)) {
    if (n.name == full) overloads.push_back(&n);
  }
  if (overloads.empty()) throw Error("LibTorch here has no " + full);
  for (const c10::OperatorName* n : overloads) {
    const auto handle = c10::Dispatcher::singleton().findSchema(*n);
    if (!handle || !handle->hasSchema()) continue;
    const c10::FunctionSchema& schema = handle->schema();
    if (random_op(schema)) throw Error(op + " is random: its generator's state is not recorded");
    auto stack = bind(schema, args, tensors);
    if (!stack) continue;
    for (size_t i = 0; i < schema.arguments().size(); ++i) {
      if (schema.arguments()[i].name() == "train" && (*stack)[i].isBool() && (*stack)[i].toBool()) {
        throw Error(op + " in training mode is random: its generator's state is not recorded");
      }
    }
    handle->callBoxed(&*stack);
    std::vector<at::Tensor> out;
    for (const c10::IValue& v : *stack) {
      if (v.isTensor()) {
        out.push_back(v.toTensor());
      } else if (v.isTensorList()) {
        for (const at::Tensor& t : v.toTensorVector()) out.push_back(t);
      } else {
        throw Error("aten::" + name + " returned something other than tensors");
      }
    }
    return out;
  }
  throw Error("the recorded arguments of " + op + " fit no overload of " + full);
}

// Where a tensor is placed (device=, non_blocking=) is not what is computed: the run here is on
// the CPU, contiguous.
void drop_placement(Args& args) {
  for (auto it = args.keywords.begin(); it != args.keywords.end();) it = placement_argument(it->first) ? args.keywords.erase(it) : std::next(it);
}

// The arguments of a Sum bound's run on |inputs|: the scalars that scale a term (addcmul's value,
// addmm's alpha and beta) by their size, as a negative one would cancel terms the bound adds.
Args magnitude_args(Args args) {
  for (const char* key : {"value", "alpha", "beta"}) {
    const auto it = args.keywords.find(key);
    if (it != args.keywords.end() && !it->second.tensor && it->second.text.rfind('-', 0) == 0) it->second.text.erase(0, 1);
  }
  return args;
}

// The tensor recorded at positional `pos` or as keyword `key`, if any.
std::optional<at::Tensor> tensor_arg(const Args& args, const std::vector<at::Tensor>& t, size_t pos, const char* key) {
  if (pos < args.positional.size() && args.positional[pos].tensor) return t[*args.positional[pos].tensor];
  if (const auto it = args.keywords.find(key); it != args.keywords.end() && it->second.tensor) return t[*it->second.tensor];
  return std::nullopt;
}

std::string text_arg(const Args& args, size_t pos, const char* key) {
  if (const auto it = args.keywords.find(key); it != args.keywords.end()) return it->second.text;
  return pos < args.positional.size() ? args.positional[pos].text : "";
}

// How many terms an output element of a Sum-bound call adds: from the call's own arguments where
// they say (a matrix product's inner size, a pool's window, an interpolation's corners), else the
// input's elements per output element (sum, mean).
int64_t sum_terms(const std::string& name, const Args& args, const std::vector<at::Tensor>& wide, const at::Tensor& y) {
  const at::Tensor& x = wide.at(0);
  if (name == "linear" || name == "matmul" || name == "mm" || name == "bmm") return x.size(-1);
  if (name == "addmm" || name == "baddbmm" || name == "addmv") return wide.at(1).size(-1);
  // addbmm(input, batch1, batch2): every batch's products summed into one matrix, and the input.
  if (name == "addbmm" && wide.at(1).dim() == 3) return wide[1].size(0) * wide[1].size(2) + 1;
  if (name == "addr" || name == "cross") return 2;  // the input plus an outer product; a2 b3 - a3 b2
  if (name == "bincount") return std::max<int64_t>(1, x.numel());  // every weight into one bin
  if (name == "embedding_bag" && wide.size() > 1) return std::max<int64_t>(1, wide[1].numel());  // every index in one bag
  // index_put with accumulate: self plus at most every value put (all at one index).
  if (name == "index_put") {
    int64_t n = 1;
    for (size_t k = 1; k < wide.size(); ++k) n += wide[k].is_floating_point() ? wide[k].numel() : 0;
    return n;
  }
  // A product of two operands contracted over K elements and nothing else (no batch dims):
  // |y| = (|x| / K)(|w| / K), so K = sqrt(|x| |w| / |y|) (1 for an outer product).
  if ((name == "mv" || name == "dot" || name == "vdot" || name == "inner" || name == "outer" || name == "ger" || name == "tensordot") &&
      wide.size() > 1) {
    const double k = std::sqrt(double(x.numel()) * double(wide[1].numel()) / double(std::max<int64_t>(1, y.numel())));
    return std::max<int64_t>(1, int64_t(std::llround(k)));
  }
  // F.fold: an output element sums the patches that cover it, at most the kernel's size of them.
  if (name == "fold") {
    const auto sizes = int_list(text_arg(args, 2, "kernel_size"));
    const std::string one = text_arg(args, 2, "kernel_size");
    if (sizes && !sizes->empty()) return std::max<int64_t>(1, (*sizes)[0] * (*sizes)[sizes->size() > 1 ? 1 : 0]);
    if (integral_text(one)) return std::max<int64_t>(1, std::stoll(one) * std::stoll(one));
  }
  // x1^T A x2 + b over A's (out, in1, in2): in1 in2 products and the bias.
  if (name == "bilinear" && wide.size() > 2 && wide[2].dim() == 3) return wide[2].size(1) * wide[2].size(2) + 1;
  // self plus what is scattered onto an element: at most the index's size along dim (scatter_add)
  // or its length (index_add).
  if ((name == "scatter_add" || name == "scatter_reduce" || name == "index_add") && wide.size() > 1) {
    const std::string dim = text_arg(args, 1, "dim");
    const at::Tensor& index = wide[1];
    if (name == "index_add") return index.numel() + 1;
    if (integral_text(dim) && index.dim() > 0) return index.size((std::stoll(dim) % index.dim() + index.dim()) % index.dim()) + 1;
  }
  // A convolution's weight: (out, in / groups, k...), transposed (in, out / groups, k...).
  if (name.rfind("conv_transpose", 0) == 0 && wide.size() > 1) return wide[1].numel() / std::max<int64_t>(1, wide[1].size(1));
  if (name.rfind("conv", 0) == 0 && wide.size() > 1) return wide[1].numel() / std::max<int64_t>(1, wide[1].size(0));
  if ((name == "cumsum" || name == "cumprod") && !args.positional.empty()) {
    const Operand* dim = args.positional.size() > 1 ? &args.positional[1] : nullptr;
    if (const auto it = args.keywords.find("dim"); it != args.keywords.end()) dim = &it->second;
    if (dim && integral_text(dim->text) && x.dim() > 0) return x.size((std::stoll(dim->text) + x.dim()) % x.dim());
  }
  if (name == "einsum") return std::max<int64_t>(1, x.numel());  // the largest contraction it can be
  const int64_t spatial = std::max<int64_t>(1, x.dim() - 2);
  if (name == "upsample_bicubic2d") return 16;
  // Antialiased resizing (F.interpolate(..., antialias=True)): a filter as wide as the scale when
  // it shrinks, so an output mixes up to 3 times the inputs per output along each axis, squared
  // (9 for bilinear's triangle), and 4 times that for bicubic's wider kernel.
  if (name == "_upsample_bilinear2d_aa" || name == "_upsample_bicubic2d_aa") {
    const int64_t per_output = (x.numel() + y.numel() - 1) / std::max<int64_t>(1, y.numel());
    return (name == "_upsample_bicubic2d_aa" ? 36 : 9) * std::max<int64_t>(1, per_output) + 4;
  }
  if (name.rfind("upsample_", 0) == 0) return int64_t(1) << spatial;
  if (name == "roi_align" && x.dim() == 4) {  // (input, rois, spatial_scale, pooled_h, pooled_w, sampling_ratio, aligned)
    const std::string ph = text_arg(args, 3, "pooled_height"), pw = text_arg(args, 4, "pooled_width");
    const std::string ratio = text_arg(args, 5, "sampling_ratio");
    if (!integral_text(ph) || !integral_text(pw) || !integral_text(ratio)) throw Error("roi_align's sizes are not recorded");
    const int64_t r = std::stoll(ratio);  // samples per bin and dimension; adaptive (<= 0): up to a bin's size
    const int64_t sh = r > 0 ? r : x.size(2) / std::max<int64_t>(1, std::stoll(ph)) + 2;
    const int64_t sw = r > 0 ? r : x.size(3) / std::max<int64_t>(1, std::stoll(pw)) + 2;
    return 4 * sh * sw;  // each sample a bilinear mix of 4 inputs, averaged
  }
  if (name == "grid_sampler") {  // (input, grid, mode: 0 bilinear, 1 nearest, 2 bicubic, ...)
    const std::string mode = text_arg(args, 2, "interpolation_mode");
    if (mode == "2") throw Error("grid_sample's bicubic weights take both signs: no bound for it is known here");
    return mode == "1" ? 1 : int64_t(1) << spatial;
  }
  if (name.rfind("avg_pool", 0) == 0) {
    const Operand* kernel = args.positional.size() > 1 ? &args.positional[1] : nullptr;
    if (const auto it = args.keywords.find("kernel_size"); it != args.keywords.end()) kernel = &it->second;
    const auto sizes = kernel ? int_list(kernel->text) : std::nullopt;
    if (sizes && !sizes->empty()) {
      int64_t k = 1;
      for (size_t d = 0; d < size_t(spatial); ++d) k *= (*sizes)[sizes->size() == 1 ? 0 : std::min(d, sizes->size() - 1)];
      return std::max<int64_t>(1, k);
    }
  }
  if (name.rfind("adaptive_avg_pool", 0) == 0 && y.dim() == x.dim()) {
    int64_t k = 1;  // a window spans at most ceil(in / out) + 1 inputs along each dimension
    for (int64_t d = x.dim() - spatial; d < x.dim(); ++d) k *= (x.size(d) + y.size(d) - 1) / std::max<int64_t>(1, y.size(d)) + 1;
    return k;
  }
  return std::max<int64_t>(1, x.numel() / std::max<int64_t>(1, y.numel()));
}

// layer_norm's S (normalisation_sums), its groups the last dimensions.
at::Tensor layer_norm_sums(const Args& args, const std::vector<at::Tensor>& t, const at::Tensor& y, int64_t& K) {
  const at::Tensor& x = t.at(0);
  const auto shape = args.positional.size() > 1 ? int_list(args.positional[1].text) : std::nullopt;
  if (!shape) throw Error("layer_norm's normalized_shape is not recorded as a list");
  const int64_t dims = int64_t(shape->size());
  K = 1;
  for (const int64_t d : *shape) K *= d;
  std::vector<int64_t> reduce;
  for (int64_t d = x.dim() - dims; d < x.dim(); ++d) reduce.push_back(d);
  double eps = 1e-5;
  if (args.positional.size() > 4) eps = python_number(args.positional[4].text).value_or(eps);
  if (const auto it = args.keywords.find("eps"); it != args.keywords.end()) eps = python_number(it->second.text).value_or(eps);
  const auto w = tensor_arg(args, t, 2, "weight"), b = tensor_arg(args, t, 3, "bias");
  return normalisation_sums(x, x, reduce, eps, w ? w->abs() : at::ones({}, x.options()),
                            b ? std::optional<at::Tensor>(b->abs()) : std::nullopt, y);
}

// group_norm(input, num_groups, weight, bias, eps) and instance_norm(input, weight, bias,
// running_mean, running_var, use_input_stats, momentum, eps): layer_norm's S over each group of K
// values (a channel's, for instance_norm), the affine step per channel. instance_norm on running
// statistics is element-wise: S = |y|, K = 0.
at::Tensor group_norm_sums(const std::string& name, const Args& args, const std::vector<at::Tensor>& t, const at::Tensor& y, int64_t& K) {
  const at::Tensor& x = t.at(0);
  if (x.dim() < 2) throw Error(name + " of a tensor of fewer than 2 dimensions");
  const bool group = name == "group_norm";
  int64_t groups = x.size(1);
  if (group) {
    const std::string g = text_arg(args, 1, "num_groups");
    if (!integral_text(g) || std::stoll(g) < 1 || x.size(1) % std::stoll(g)) throw Error("group_norm's num_groups is not recorded");
    groups = std::stoll(g);
  } else if (text_arg(args, 5, "use_input_stats") == "False") {
    K = 0;
    return y.abs();
  }
  const double eps = python_number(text_arg(args, group ? 4 : 7, "eps")).value_or(1e-5);
  const at::Tensor g = x.reshape({x.size(0), groups, -1});
  K = g.size(2);
  std::vector<int64_t> per_channel(size_t(x.dim()), 1);
  per_channel[1] = x.size(1);
  const auto w = tensor_arg(args, t, group ? 2 : 1, "weight"), b = tensor_arg(args, t, group ? 3 : 2, "bias");
  return normalisation_sums(x, g, {2}, eps, w ? w->abs().reshape(per_channel) : at::ones({}, x.options()),
                            b ? std::optional<at::Tensor>(b->abs().reshape(per_channel)) : std::nullopt, y);
}

// var, std, var_mean, std_mean(input, dim, unbiased | correction=, keepdim): output k's S and K.
// A variance over N values with correction c is sum (x - m)^2 / (N - c); a float32 kernel (two
// passes, or Welford's) strays by about N roundings of the terms it sums, each no larger than x^2:
// S = sum x^2 / (N - c), K = N + 8. A deviation is its square root: an error E in the variance v
// moves it by at most E / sqrt(v), and by at most sqrt(E) wherever v is within 16 E of 0; its S is
// that over the smallest scale a float32 bound has, (K + 2) 2^-24 (a coarser profile's larger scale
// only widens it). The mean of var_mean and std_mean is a sum of N terms: S = mean |x|, K = N.
at::Tensor moment_sums(const std::string& name, const Args& args, const at::Tensor& x, const at::Tensor& y, size_t k, int64_t& K) {
  const int64_t N = x.numel() / std::max<int64_t>(1, y.numel());
  std::vector<int64_t> dims;
  double correction = 1;
  const std::string second = args.positional.size() > 1 ? args.positional[1].text : "";
  if (second == "True" || second == "False") {
    correction = second == "True" ? 1 : 0;  // var(input, unbiased)
  } else {
    const std::string dim = text_arg(args, 1, "dim");
    if (const auto d = int_list(dim)) dims = *d;
    const std::string unbiased = text_arg(args, 2, "unbiased");
    if (unbiased == "False") correction = 0;
    if (const auto it = args.keywords.find("correction"); it != args.keywords.end()) correction = python_number(it->second.text).value_or(1);
  }
  if (dims.empty()) {
    for (int64_t d = 0; d < x.dim(); ++d) dims.push_back(d);
  }
  K = N + 8;
  const bool mean_output = k == 1;
  const at::Tensor per = mean_output ? x.abs().mean(dims, true) : x.pow(2).sum(dims, true) / std::max(1.0, double(N) - correction);
  if (y.numel() != per.numel()) throw Error(name + "'s reduced dimensions are not recorded");
  at::Tensor S = per.reshape(y.sizes());
  if (mean_output) {
    K = N;
    return S;
  }
  if (name.rfind("std", 0) != 0) return S;
  const double g = double(K + 2) * std::ldexp(1.0, -24);
  const at::Tensor v = y.pow(2);  // y is the deviation
  return at::where(v >= 16 * g * S, S / v.sqrt(), (S / g).sqrt());
}

// A recurrent layer (lstm, gru, rnn_tanh, rnn_relu: input, hx, params, has_biases, num_layers,
// dropout, train, bidirectional, batch_first): its time steps times its layers and directions. A
// cell (lstm_cell...: input, hx, w_ih, w_hh, b_ih, b_hh) is one step of one layer.
int64_t recurrent_steps(const std::string& name, const Args& args, const at::Tensor& x) {
  if (name.size() > 5 && name.compare(name.size() - 5, 5, "_cell") == 0) return 1;
  const std::string layers = text_arg(args, 4, "num_layers");
  const bool batch_first = text_arg(args, 8, "batch_first") == "True", both = text_arg(args, 7, "bidirectional") == "True";
  const int64_t steps = x.dim() == 3 ? x.size(batch_first ? 1 : 0) : x.dim() > 0 ? x.size(0) : 1;
  return std::max<int64_t>(1, steps * (integral_text(layers) ? std::stoll(layers) : 1) * (both ? 2 : 1));
}

// The dim a recorded call names at `pos` or as `key`, wrapped into x's rank; `fallback` where the
// line names none.
int64_t dim_arg(const Args& args, size_t pos, const char* key, const at::Tensor& x, std::optional<int64_t> fallback, const std::string& name) {
  const std::string text = text_arg(args, pos, key);
  std::optional<int64_t> d = integral_text(text) ? std::optional<int64_t>(std::stoll(text)) : fallback;
  if (!d || x.dim() == 0 || *d < -x.dim() || *d >= x.dim()) throw Error(name + "'s dim is not recorded");
  return *d < 0 ? *d + x.dim() : *d;
}

// cross(a, b, dim): each output a_j b_k - a_k b_j, two products that may cancel: S = |a_j b_k| +
// |a_k b_j|. No dim (torch.cross's old default): the first of size 3.
at::Tensor cross_sums(const Args& args, const std::vector<at::Tensor>& t) {
  const std::vector<at::Tensor> ab = at::broadcast_tensors({t.at(0).abs(), t.at(1).abs()});
  std::optional<int64_t> first3;
  for (int64_t d = 0; d < ab[0].dim() && !first3; ++d) {
    if (ab[0].size(d) == 3) first3 = d;
  }
  const int64_t d = dim_arg(args, 2, "dim", ab[0], first3, "cross");
  return ab[0].roll(-1, d) * ab[1].roll(-2, d) + ab[0].roll(-2, d) * ab[1].roll(-1, d);
}

// A sum of terms of one sign (Positive): an output element's terms, each within a rounding or two
// of itself (a difference of two inputs is rounded relative to itself, then squared, made absolute
// or smoothed), so the sum strays by K + 2 roundings of itself. cdist's Euclidean distance by
// matrix products (|x|^2 + |y|^2 - 2 x.y, PyTorch's path where either side has more than 25 rows)
// cancels instead: its squared distance strays by K + 2 roundings of Q = (|x| + |y|)^2, which moves
// the distance r by at most that over r, or its square root where r is near 0 (S over float32's
// unit, as moment_sums does for a deviation).
at::Tensor positive_sums(const std::string& name, const Args& args, const std::vector<at::Tensor>& t, const at::Tensor& y, int64_t& K) {
  const at::Tensor& x = t.at(0);
  int64_t numel = x.numel();
  for (const at::Tensor& o : t) numel = std::max<int64_t>(numel, o.is_floating_point() ? o.numel() : 0);
  K = std::max<int64_t>(1, numel / std::max<int64_t>(1, y.numel()));
  if (name == "pairwise_distance") K = x.dim() > 0 ? x.size(-1) : 1;
  if (name == "renorm") K = std::max<int64_t>(1, x.numel() / std::max<int64_t>(1, x.size(dim_arg(args, 2, "dim", x, std::nullopt, name))));
  if (name != "cdist") return y.abs();
  if (t.size() < 2 || x.dim() < 2) throw Error("cdist's inputs are not recorded as matrices");
  K = x.size(-1);
  const std::optional<double> p = python_number(text_arg(args, 2, "p"));
  const std::string mode = text_arg(args, 3, "compute_mode");  // as ATen numbers it: None, 1 always, 2 never
  const bool rows = x.size(-2) > 25 || t[1].size(-2) > 25;
  const bool mm = p.value_or(2.0) == 2.0 && mode != "2" && (rows || mode == "1");
  if (!mm) return y.abs();
  const at::Tensor Q = (x.norm(2, -1).unsqueeze(-1) + t[1].norm(2, -1).unsqueeze(-2)).pow(2);
  const double unit = double(K + 2) * std::ldexp(1.0, -24);
  return at::minimum(Q / y.abs().clamp_min(1e-300), (Q / unit).sqrt());
}

// A loss's S from its terms' sizes: reduced as the call reduces (`reduction` as Python names it:
// 'none' keeps them, 'sum', 'batchmean' over x's first dim, else the mean over `count`), plus |y|.
at::Tensor reduced_terms(const at::Tensor& terms, const std::string& reduction, int64_t count, const at::Tensor& x, const at::Tensor& y) {
  if (reduction == "'none'") return terms.expand_as(y) + y.abs();
  at::Tensor total = terms.sum();
  if (reduction == "'batchmean'") {
    if (x.dim() > 0) total = total / double(std::max<int64_t>(1, x.size(0)));
  } else if (reduction != "'sum'") {
    total = total / double(std::max<int64_t>(1, count));
  }
  return total.expand_as(y) + y.abs();
}

// The margin and ranking losses (LossTerms): each term a clamp or a log of a few operands' sum,
// within a few roundings of their sizes, reduced as the call reduces: S is that reduction of the
// sizes, plus |y|. margin_ranking max(0, -t (x1 - x2) + m): |x1| + |x2| + |m|; hinge_embedding x
// or max(0, m - x): |x| + |m|; soft_margin log(1 + exp(-t x)): |t x| + 1; cosine_embedding 1 - cos
// or max(0, cos - m), cos over D: 1 + |m|; triplet_margin max(d(a, p) - d(a, n) + m, 0), each d
// within D roundings of itself: d(a, p) + d(a, n) (+ d(p, n) with swap) + |m|; poisson_nll
// exp(x) - t x (log_input) or x - t log(x + eps): exp(x) + |t x| or |x| + |t log(x + eps)|, plus
// Stirling's term where full; multi_margin's mean over C classes of max(0, m - x_y + x_i)^p:
// (|m| + |x_y| + |x_i|)^p over C, times the class's weight. K: the terms summed, the dims reduced.
at::Tensor loss_term_sums(const std::string& name, const Args& args, const std::string& reduction, const std::vector<at::Tensor>& t,
                          const at::Tensor& y, int64_t& K) {
  const at::Tensor& x = t.at(0);
  const auto number = [&](size_t pos, const char* key, double fallback) { return python_number(text_arg(args, pos, key)).value_or(fallback); };
  at::Tensor terms;
  int64_t D = 1;
  if (name == "margin_ranking_loss" && t.size() >= 2) {
    terms = x.abs() + t[1].abs() + std::fabs(number(3, "margin", 0));
  } else if (name == "hinge_embedding_loss") {
    terms = x.abs() + std::fabs(number(2, "margin", 1));
  } else if (name == "soft_margin_loss" && t.size() >= 2) {
    terms = (x * t[1]).abs() + 1;
  } else if (name == "cosine_embedding_loss" && t.size() >= 2) {
    D = x.dim() > 0 ? x.size(-1) : 1;
    terms = at::ones(x.dim() > 1 ? x.sizes().slice(0, x.dim() - 1) : at::IntArrayRef{}, x.options()) * (1 + std::fabs(number(3, "margin", 0)));
  } else if (name == "triplet_margin_loss" && t.size() >= 3) {
    D = x.dim() > 0 ? x.size(-1) : 1;
    const double p = number(4, "p", 2), eps = number(5, "eps", 1e-6);
    terms = at::pairwise_distance(x, t[1], p, eps) + at::pairwise_distance(x, t[2], p, eps) + std::fabs(number(3, "margin", 1));
    if (text_arg(args, 6, "swap") == "True") terms = terms + at::pairwise_distance(t[1], t[2], p, eps);
  } else if (name == "poisson_nll_loss" && t.size() >= 2) {
    const bool log_input = text_arg(args, 2, "log_input") != "False";
    terms = log_input ? x.exp() + (t[1] * x).abs() : x.abs() + (t[1] * (x + number(4, "eps", 1e-8)).log()).abs();
    if (text_arg(args, 3, "full") == "True") terms = terms + (t[1] * t[1].clamp_min(1).log()).abs() + t[1].abs() + 0.5 * (2 * M_PI * t[1].clamp_min(1)).log();
  } else if (name == "multi_margin_loss" && t.size() >= 2 && x.dim() >= 1) {
    D = x.size(-1);
    const double p = number(2, "p", 1), m = std::fabs(number(3, "margin", 1));
    const at::Tensor rows = x.dim() == 1 ? x.unsqueeze(0) : x;
    const at::Tensor picked = rows.gather(1, t[1].reshape({-1, 1}).to(at::kLong)).abs();
    at::Tensor each = (m + picked + rows.abs()).pow(p);
    if (const auto w = tensor_arg(args, t, 4, "weight")) each = each * w->abs().index_select(0, t[1].reshape({-1}).to(at::kLong)).unsqueeze(1);
    terms = each.sum(1) / double(D);
    if (x.dim() == 1) terms = terms.squeeze(0);
  } else {
    throw Error(name + ": its operands are not recorded as its bound needs");
  }
  K = (reduction == "'none'" ? 1 : std::max<int64_t>(1, terms.numel())) + D + 6;
  return reduced_terms(terms, reduction, terms.numel(), x, y);
}

// Cross entropy and its binary and KL forms (LogLoss): a mean or sum of N terms of one sign, each
// a log's result within a few roundings of itself and of 1 (a log of a rounded argument strays by
// a rounding absolute). cross_entropy's term is log_softmax over C classes: K = C + N + 4.
// binary_cross_entropy_with_logits' term also sums |x| (x·(1 - t) plus log(1 + exp(-x))). kl_div's
// terms t·(log t - x) take both signs: S is their sizes |t|·(|log t| + |x|), reduced as the call.
// A weight scales each term by at most its largest size. `reduction` as Python named it ('mean').
at::Tensor log_loss_sums(const std::string& name, const Args& args, const std::string& reduction, const std::vector<at::Tensor>& t,
                         const at::Tensor& y, int64_t& K) {
  const at::Tensor& x = t.at(0);
  const bool reduced = y.numel() == 1 && x.numel() > 1 && reduction != "'none'";
  if (name == "kl_div") {
    if (t.size() < 2) throw Error("kl_div's target is not recorded");
    const bool log_target = text_arg(args, 99, "log_target") == "True";
    const at::Tensor p = log_target ? t[1].exp() : t[1];
    const at::Tensor logp = log_target ? t[1].abs() : at::where(p == 0, at::zeros_like(p), p.abs().log().abs());
    const at::Tensor terms = p.abs() * (logp + x.abs()) + p.abs();
    K = (reduced ? x.numel() : 1) + 4;
    return reduced_terms(terms, reduction, x.numel(), x, y);
  }
  double scale = 1.0;
  for (const char* key : {"weight", "pos_weight"}) {
    const auto it = args.keywords.find(key);
    if (it != args.keywords.end() && it->second.tensor) scale *= std::max(1.0, t.at(*it->second.tensor).abs().max().item<double>());
  }
  if (name == "cross_entropy") {
    const int64_t C = x.dim() > 1 ? x.size(1) : x.numel();
    K = C + (reduced ? x.numel() / std::max<int64_t>(1, C) : 1) + 4;
    return y.abs() + scale;
  }
  K = (reduced ? x.numel() : 1) + 6;
  const double logits = name == "binary_cross_entropy_with_logits" ? 2.0 * (reduced ? x.abs().mean().item<double>() : 0.0) : 0.0;
  at::Tensor S = y.abs() + scale * (1.0 + logits);
  if (name == "binary_cross_entropy_with_logits" && !reduced) S = S + 2.0 * scale * x.abs().expand_as(y);
  return S;
}

// One item of an index as Python's repr gives it (slice(None,4,None), None, Ellipsis, 3, True),
// or a tensor named where it stood (`in1_0`: the recorded tensors of the key, in order), made in
// place at the end of `key`: LibTorch's TensorIndex leaves the members of other kinds
// uninitialised, so copying or moving one reads them (undefined behaviour UBSan reports).
void add_index_item(const std::string& t, const std::vector<at::Tensor>& key_tensors, size_t& next_tensor,
                    std::vector<at::indexing::TensorIndex>& key) {
  using namespace at::indexing;
  if (t == "None") return void(key.emplace_back(c10::nullopt));
  if (t == "Ellipsis" || t == "...") return void(key.emplace_back(Ellipsis));
  if (t == "True" || t == "False") return void(key.emplace_back(t == "True"));
  if (integral_text(t)) return void(key.emplace_back(int64_t(std::stoll(t))));
  static const std::regex tensor(R"(^in[0-9]+(_[0-9]+)?$)");
  if (std::regex_match(t, tensor)) {
    if (next_tensor >= key_tensors.size()) throw Error("the index names more tensors than were recorded");
    return void(key.emplace_back(key_tensors[next_tensor++]));
  }
  if (t.size() > 2 && t.front() == '[' && t.back() == ']') {  // a list of ints: x[:, [-1], :] (nanoGPT's last position)
    if (const auto ints = int_list(t)) return void(key.emplace_back(at::tensor(*ints, at::kLong)));
  }
  // A bound is a number, None, or a 0-dim integer tensor as Python's repr shows it (Mask R-CNN pastes
  // masks at x[y0:y1, x0:x1] with tensor bounds): its value is in the repr.
  static const std::regex slice(R"(^slice\((None|-?[0-9]+|tensor\(-?[0-9]+\)),(None|-?[0-9]+|tensor\(-?[0-9]+\)),(None|-?[0-9]+)\)$)");
  std::smatch m;
  if (!std::regex_match(t, m, slice)) throw Error("an index item this cannot read: " + t);
  const auto bound = [](std::string v) {
    if (v.rfind("tensor(", 0) == 0) v = v.substr(7, v.size() - 8);
    return v == "None" ? c10::optional<int64_t>() : c10::optional<int64_t>(std::stoll(v));
  };
  key.emplace_back(Slice(bound(m[1]), bound(m[2]), bound(m[3])));
}

// A key x[key] as recorded: one item, or a tuple of them "(a,b,...)" (slices hold no commas at
// the top level: split outside parentheses and brackets).
std::vector<at::indexing::TensorIndex> index_key(const Operand& o, const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> key_tensors;
  if (o.tensor) key_tensors.push_back(tensors[*o.tensor]);
  for (const size_t i : o.tensor_list) key_tensors.push_back(tensors[i]);
  std::string text = o.text;
  if (text.empty() && o.tensor) text = "in0";  // the one tensor
  if (text.empty()) {  // a tuple of tensors alone (x[rows, cols]), recorded as in1_0, in1_1, ...
    if (key_tensors.empty()) throw Error("the index was not recorded");
    for (size_t i = 0; i < key_tensors.size(); ++i) text += (i ? ",in" : "(in") + std::to_string(i);
    text += ")";
  }
  std::vector<std::string> items;
  if (text.size() >= 2 && text.front() == '(' && text.back() == ')' && text.rfind("slice(", 0) != 0) {
    int depth = 0;
    std::string cur;
    for (size_t i = 1; i + 1 < text.size(); ++i) {
      const char c = text[i];
      depth += c == '(' || c == '[' ? 1 : c == ')' || c == ']' ? -1 : 0;
      if (c == ',' && depth == 0) {
        items.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    if (!cur.empty()) items.push_back(cur);
  } else {
    items.push_back(text);
  }
  std::vector<at::indexing::TensorIndex> key;
  key.reserve(items.size());  // never reallocated: no TensorIndex is moved (add_index_item)
  size_t next = 0;
  for (const std::string& item : items) add_index_item(item, key_tensors, next, key);
  if (next != key_tensors.size()) throw Error("the index names fewer tensors than were recorded");
  return key;
}

// x[key] (getitem) and x[key] = value (setitem, whose output is x after it).
std::vector<at::Tensor> run_index(bool set, const Args& a, const std::vector<at::Tensor>& tensors) {
  if (a.positional.size() != (set ? 3u : 2u) || !a.positional[0].tensor || !a.keywords.empty()) throw Error("an index call with other arguments");
  const at::Tensor& x = tensors[*a.positional[0].tensor];
  const std::vector<at::indexing::TensorIndex> key = index_key(a.positional[1], tensors);
  if (!set) return {x.index(key)};
  at::Tensor y = x.clone();
  const Operand& v = a.positional[2];
  if (v.tensor) {
    y.index_put_(key, tensors[*v.tensor]);
  } else if (const auto n = python_scalar(v.text); n && v.tensor_list.empty()) {
    y.index_put_(key, *n);
  } else {
    throw Error("the assigned value is not recorded in full");
  }
  return {y};
}

// The call's name, which the table knows it by (kernels/torch_calls.h).
std::string call_name(const std::string& op) {
  const std::string name = torch_call_name(op);
  if (name.empty()) throw Error("parity cannot run " + op + " again (not a torch call)");
  return name;
}

// torch.tensor(data) with data a number or nested lists or tuples of them as Python writes them
// ("0.25", "[[1, 2], [3, 4]]", "(0.5, 1.5)", "True"): its values in order, its shape, and what they are (bool, int,
// float). nullopt for anything else (a tensor in the list, a string).
struct Literal {
  std::vector<double> values;
  std::vector<int64_t> shape;
  bool any_float = false, all_bool = true;
};

std::optional<Literal> python_literal(const std::string& text) {
  Literal lit;
  std::vector<int64_t> counts;  // items seen at each open depth
  size_t depth = 0, max_depth = 0;
  bool shape_known = false;
  for (size_t at = 0; at < text.size();) {
    const char c = text[at];
    if (c == ' ' || c == ',') {
      ++at;
    } else if (c == '[' || c == '(') {
      if (depth < counts.size()) counts[depth] += 1;
      ++depth, ++at;
      max_depth = std::max(max_depth, depth);
      counts.resize(depth + 1, 0);
      counts[depth] = 0;
    } else if (c == ']' || c == ')') {
      if (depth == 0) return std::nullopt;
      const size_t dim = depth - 1;  // the list just closed holds counts[depth] items
      if (lit.shape.size() <= dim) lit.shape.resize(dim + 1, -1);
      if (lit.shape[dim] >= 0 && lit.shape[dim] != counts[depth]) return std::nullopt;  // ragged
      lit.shape[dim] = counts[depth];
      --depth, ++at;
    } else {
      const size_t end = text.find_first_of(",]) ", at);
      const std::string token = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
      const std::optional<double> v = python_number(token);
      if (!v) return std::nullopt;
      lit.values.push_back(*v);
      lit.all_bool = lit.all_bool && (token == "True" || token == "False");
      lit.any_float = lit.any_float || (!integral_text(token) && token != "True" && token != "False");
      if (depth < counts.size()) counts[depth] += 1;
      at = end == std::string::npos ? text.size() : end;
    }
  }
  shape_known = depth == 0 && lit.shape.size() == max_depth;
  if (!shape_known || (lit.values.empty() && max_depth == 0)) return std::nullopt;
  int64_t n = 1;
  for (const int64_t s : lit.shape) n *= s;
  if (n != int64_t(lit.values.size())) return std::nullopt;
  return lit;
}

// A call's tensors as recorded, and as the judge runs them: floats widened to float64.
struct Operands {
  std::vector<at::Tensor> given, wide;
};
Operands operands(const std::vector<Tensor>& in) {
  Operands o;
  for (const Tensor& t : in) {
    o.given.push_back(to_aten(t));
    o.wide.push_back(o.given.back().is_floating_point() ? o.given.back().to(at::kDouble) : o.given.back());
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

// A normalisation's S: with mean m, deviation s and z_i = (x_i - m) / s over each group of K values
// (`grouped`: x's values, each group along `reduce`), |w_i| (mean|x| / s + 2 |z_i| + 1) + |b_i| +
// |y_i| bounds what the statistics' rounding (mean off by up to K u mean|x|, s relatively by about
// K u) and the affine step do to y_i. `w` and `b`: their magnitudes, shaped to broadcast over x.
at::Tensor normalisation_sums(const at::Tensor& x, const at::Tensor& grouped, at::IntArrayRef reduce, double eps, const at::Tensor& w,
                              const std::optional<at::Tensor>& b, const at::Tensor& y) {
  const at::Tensor mean = grouped.mean(reduce, true), s = ((grouped - mean).pow(2).mean(reduce, true) + eps).sqrt();
  const at::Tensor z = ((grouped - mean) / s).abs().reshape(x.sizes());
  const at::Tensor spread = (grouped.abs().mean(reduce, true) / s).expand_as(grouped).reshape(x.sizes());
  at::Tensor S = (spread + 2 * z + 1) * w;
  if (b) S = S + *b;
  return S + y.abs();
}

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
    TorchCallResult r;
    TorchBound bound = known->bound;
    // index_put(..., accumulate=True) adds what repeated indices put onto one element: a sum.
    if (name == "index_put" && text_arg(args, 3, "accumulate") == "True") bound = TorchBound::Sum;
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
          if (known->samples) magnitudes.at(1) = wide.at(1);  // where to sample stays: only the values' signs go
          const Args sizes = magnitude_args(args);
          if (name == "cross") {
            S = cross_sums(args, wide);
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

namespace {

// The dims a torch.fft call transforms, wrapped into [0, rank): (input, n or s, dim, norm). The
// one-dimensional transforms (fft, rfft, ihfft...) default to the last dim, fft2 and its kin to the
// last two, fftn and its kin to the last len(s) or every dim.
std::vector<int64_t> fourier_dims(const std::string& name, const Args& args, int64_t rank) {
  const std::string dim = text_arg(args, 2, "dim");
  std::vector<int64_t> dims;
  if (!dim.empty() && dim != "None") {
    const auto listed = integral_text(dim) ? std::optional<std::vector<int64_t>>(std::vector<int64_t>{std::stoll(dim)}) : int_list(dim);
    if (!listed) throw Error(name + "'s dim is not recorded");
    dims = *listed;
  } else if (name.back() == '2') {
    dims = {-2, -1};
  } else if (name.back() == 'n') {
    const std::string s = text_arg(args, 1, "s");
    const auto sizes = s.empty() || s == "None" ? std::nullopt : int_list(s);
    for (int64_t d = sizes ? rank - int64_t(sizes->size()) : 0; d < rank; ++d) dims.push_back(d);
  } else {
    dims = {-1};
  }
  for (int64_t& d : dims) {
    if (d < -rank || d >= rank) throw Error(name + "'s dim " + std::to_string(d) + " is not one of its input's");
    d = d < 0 ? d + rank : d;
  }
  return dims;
}

// istft(self, n_fft, hop_length, win_length, window, center, normalized, onesided, length,
// return_complex): each frame's inverse transform within the Fourier bound of its 2-norm (the
// spectrum's by Parseval: over sqrt(n_fft) unless normalized, at most sqrt(2) times a half
// spectrum's), windowed and added over the frames that cover a sample, over their window's
// envelope: S is that sum of |window| times each frame's norm, over the envelope, plus |y|; K the
// transform's and the overlap's terms.
at::Tensor istft_sums(const Args& args, const std::vector<at::Tensor>& wide, const at::Tensor& y, int64_t& K) {
  const std::string n_text = text_arg(args, 1, "n_fft");
  if (!integral_text(n_text) || wide.empty() || !wide[0].is_complex() || wide[0].dim() < 2) throw Error("istft's n_fft or input is not recorded as one");
  const int64_t n_fft = std::stoll(n_text);
  const std::string win_text = text_arg(args, 3, "win_length"), hop_text = text_arg(args, 2, "hop_length");
  const int64_t win_length = integral_text(win_text) ? std::stoll(win_text) : n_fft;
  const int64_t hop = integral_text(hop_text) ? std::stoll(hop_text) : std::max<int64_t>(1, win_length / 4);
  const at::Tensor spectra = wide[0].dim() == 2 ? wide[0].unsqueeze(0) : wide[0];  // (batch, frequencies, frames)
  const std::string onesided_text = text_arg(args, 7, "onesided");
  const bool onesided = onesided_text == "True" || ((onesided_text.empty() || onesided_text == "None") && spectra.size(1) != n_fft);
  const bool normalized = text_arg(args, 6, "normalized") == "True", center = text_arg(args, 5, "center") != "False";
  at::Tensor w = at::ones({win_length}, spectra.options().dtype(at::kDouble));
  if (const auto given = tensor_arg(args, wide, 4, "window")) w = given->abs().to(at::kDouble);
  if (w.size(0) < n_fft) w = at::constant_pad_nd(w, {(n_fft - w.size(0)) / 2, n_fft - w.size(0) - (n_fft - w.size(0)) / 2});
  const at::Tensor norms = spectra.abs().pow(2).sum(1).sqrt() * (onesided ? std::sqrt(2.0) : 1.0) / (normalized ? 1.0 : std::sqrt(double(n_fft)));
  const int64_t frames = spectra.size(2), total = n_fft + hop * (frames - 1);
  at::Tensor spread = at::zeros({spectra.size(0), total}, norms.options()), envelope = at::zeros({total}, norms.options());
  for (int64_t f = 0; f < frames; ++f) {
    spread.narrow(1, f * hop, n_fft).add_(w.unsqueeze(0) * norms.narrow(1, f, 1));
    envelope.narrow(0, f * hop, n_fft).add_(w * w);
  }
  const int64_t start = center ? n_fft / 2 : 0;
  const std::string length = text_arg(args, 8, "length");
  const int64_t end = integral_text(length) ? start + std::stoll(length) : center ? total - n_fft / 2 : total;
  if (end > total) {  // istft pads with zeros past the frames: nothing there to bound
    spread = at::constant_pad_nd(spread, {0, end - total});
    envelope = at::constant_pad_nd(envelope, {0, end - total}, 1.0);
  }
  const at::Tensor S = spread.narrow(1, start, end - start) / envelope.narrow(0, start, end - start).clamp_min(1e-300);
  K = 2 * int64_t(std::ceil(std::log2(double(std::max<int64_t>(2, n_fft))))) + 8 + (n_fft + hop - 1) / hop;
  return S.reshape(y.sizes()) + y.abs();
}

}  // namespace

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
