// Reading a recorded call's line into arguments ATen takes, and running an operator on them
// through LibTorch's dispatcher: the call's tensors (as the judge holds them, float64) and the rest
// parsed from Python's repr, bound to the first of the operator's overloads they fit.
#include "kernels/aten/torch_args.h"

#include <ATen/TensorIndexing.h>
#include <ATen/ops/tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

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


namespace {

// A 0-d tensor where the operator takes a number, as Python passes it (torch.arange(t, 6), a size
// read out of a box): its value, an int only from an integer tensor.
std::optional<c10::IValue> number_of(const at::Tensor& t, c10::TypeKind kind) {
  const bool integral = !t.is_floating_point() && !t.is_complex() && t.scalar_type() != at::kBool;
  switch (kind) {
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType:
      return integral ? std::optional<c10::IValue>(c10::IValue(t.item<int64_t>())) : std::nullopt;
    case c10::TypeKind::FloatType:
      return t.is_complex() ? std::nullopt : std::optional<c10::IValue>(c10::IValue(t.item<double>()));
    case c10::TypeKind::NumberType:
      return integral ? c10::IValue(c10::Scalar(t.item<int64_t>())) : c10::IValue(t.item());
    default:
      return std::nullopt;
  }
}

// A list's text with its 0-d tensors' values in their places: "(in0_0,4)" of torch.full((t, 4),
// ...), the names in the order of `o`'s tensors; "" when one is not an integer 0-d tensor. A list
// of tensors alone (torch.full((t0, t1), ...)) has no text: its items are the tensors in order.
std::string with_tensor_values(const Operand& o, const std::vector<at::Tensor>& tensors) {
  static const std::regex name(R"(in[0-9]+_[0-9]+)");
  std::string text = o.text;
  if (text.empty()) {
    for (size_t k = 0; k < o.tensor_list.size(); ++k) text += (k ? ",in0_" : "(in0_") + std::to_string(k);
    text += ",)";
  }
  std::string out;
  size_t k = 0, from = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), name); it != std::sregex_iterator(); ++it, ++k) {
    if (k >= o.tensor_list.size()) return "";
    const at::Tensor& t = tensors[o.tensor_list[k]];
    if (t.dim() != 0 || t.is_floating_point() || t.is_complex() || t.scalar_type() == at::kBool) return "";
    out += text.substr(from, size_t(it->position()) - from) + std::to_string(t.item<int64_t>());
    from = size_t(it->position() + it->length());
  }
  return k == o.tensor_list.size() ? out + text.substr(from) : "";
}

// The value of `o` as schema type `type` takes it; nullopt when it cannot be that. `as_numbers`:
// 0-d tensors may stand for numbers (tried only where no overload takes them as tensors, as Python
// picks an overload).
std::optional<c10::IValue> value_as(const Operand& o, const c10::TypePtr& type, const std::vector<at::Tensor>& tensors, bool as_numbers) {
  using K = c10::TypeKind;
  if (type->kind() == K::OptionalType) {
    if (!o.tensor && o.tensor_list.empty() && o.text == "None") return c10::IValue();
    return value_as(o, type->castRaw<c10::OptionalType>()->getElementType(), tensors, as_numbers);
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
      const auto ints = o.tensor || (!o.tensor_list.empty() && !as_numbers) ? std::nullopt
                                                                             : int_list(o.tensor_list.empty() ? o.text : with_tensor_values(o, tensors));
      return ints ? std::optional<c10::IValue>(c10::IValue(*ints)) : std::nullopt;
    }
    if (item->kind() == K::FloatType) {
      const auto floats = o.tensor || !o.tensor_list.empty() ? std::nullopt : float_list(o.text);
      return floats ? std::optional<c10::IValue>(c10::IValue(*floats)) : std::nullopt;
    }
    return std::nullopt;
  }
  if (as_numbers && o.tensor && tensors[*o.tensor].dim() == 0) return number_of(tensors[*o.tensor], type->kind());
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
std::optional<torch::jit::Stack> bind(const c10::FunctionSchema& s, Args args, const std::vector<at::Tensor>& tensors, bool as_numbers) {
  torch::jit::Stack stack;
  size_t next = 0;
  if (args.keywords.count("input") && !args.keywords.count("self")) {
    args.keywords["self"] = args.keywords["input"];
    args.keywords.erase("input");
  }
  for (const c10::Argument& a : s.arguments()) {
    const c10::TypePtr& type = a.real_type();
    std::optional<c10::IValue> v;
    // None given by name for an argument that cannot be None but has a default is Python's way of
    // asking for that default (F.max_pool2d's stride=None on its way to max_pool2d_with_indices,
    // whose stride [] is the kernel's size). Not a positional None: it would let an overload take
    // another's arguments (torch.stft's onesided=None as stft.center's pad_mode).
    const auto none_for_default = [&](const Operand& given) {
      return a.default_value() && type->kind() != c10::TypeKind::OptionalType && !given.tensor && given.tensor_list.empty() && given.text == "None";
    };
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
        v = value_as(args.positional[next++], type, tensors, as_numbers);
      }
    } else if (const auto it = args.keywords.find(a.name()); it != args.keywords.end()) {
      v = none_for_default(it->second) ? std::optional<c10::IValue>(*a.default_value()) : repeated_int(a, it->second);
      if (!v) v = value_as(it->second, type, tensors, as_numbers);
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

}  // namespace

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
  for (const bool as_numbers : {false, true}) {
    for (const c10::OperatorName* n : overloads) {
      const auto handle = c10::Dispatcher::singleton().findSchema(*n);
      if (!handle || !handle->hasSchema()) continue;
      const c10::FunctionSchema& schema = handle->schema();
      if (random_op(schema)) throw Error(op + " is random: its generator's state is not recorded");
      auto stack = bind(schema, args, tensors, as_numbers);
      if (!stack) continue;
      for (size_t i = 0; i < schema.arguments().size(); ++i) {
        if (schema.arguments()[i].name() == "train" && (*stack)[i].isBool() && (*stack)[i].toBool()) {
          throw Error(op + " in training mode is random: its generator's state is not recorded");
        }
      }
      handle->callBoxed(&*stack);
      std::vector<at::Tensor> out;
      for (const c10::IValue& v : *stack) {
        if (v.isTensor()) {  // a sparse result (sparse_coo_tensor) as the recorder writes it: dense
          out.push_back(v.toTensor().layout() == at::kStrided ? v.toTensor() : v.toTensor().to_dense());
        } else if (v.isTensorList()) {
          for (const at::Tensor& t : v.toTensorVector()) out.push_back(t);
        } else {
          throw Error("aten::" + name + " returned something other than tensors");
        }
      }
      return out;
    }
  }
  throw Error("the recorded arguments of " + op + " fit no overload of " + full);
}

// Where a tensor is placed (device=, non_blocking=) is not what is computed: the run here is on
// the CPU, contiguous.
void drop_placement(Args& args) {
  for (auto it = args.keywords.begin(); it != args.keywords.end();) it = placement_argument(it->first) ? args.keywords.erase(it) : std::next(it);
}

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


int64_t dim_arg(const Args& args, size_t pos, const char* key, const at::Tensor& x, std::optional<int64_t> fallback, const std::string& name) {
  const std::string text = text_arg(args, pos, key);
  std::optional<int64_t> d = integral_text(text) ? std::optional<int64_t>(std::stoll(text)) : fallback;
  if (!d || x.dim() == 0 || *d < -x.dim() || *d >= x.dim()) throw Error(name + "'s dim is not recorded");
  return *d < 0 ? *d + x.dim() : *d;
}


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

std::string call_name(const std::string& op) {
  const std::string name = torch_call_name(op);
  if (name.empty()) throw Error("parity cannot run " + op + " again (not a torch call)");
  return name;
}

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

}  // namespace parity
