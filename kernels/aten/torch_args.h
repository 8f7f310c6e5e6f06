#pragma once
// A recorded call's line read into arguments ATen takes, and an ATen operator run on them through
// LibTorch's dispatcher (aten/torch_args.cpp); for the aten plugin only.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>
#include <c10/core/ScalarType.h>

namespace parity {

// A Python number as repr() writes it (2, -0.5, 1e-05, inf, nan, True); nullopt for anything else.
std::optional<double> python_number(const std::string& text);
// A Python int as repr() writes it (2, -3): neither bool, point, exponent, inf nor nan.
bool integral_text(const std::string& text);
// The Scalar PyTorch makes of that number: an int for an int (integer tensors refuse a floating
// one), else a double; nullopt for anything else.
std::optional<c10::Scalar> python_scalar(const std::string& text);

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

// The line's arguments; `tensors`: how many tensors the layer recorded. Throws parity::Error.
Args read_line(const std::string& line, size_t tensors);
// "(1,2)", "[1,2]", "torch.Size([1,2])", "()" or one integer: a list of integers.
std::optional<std::vector<int64_t>> int_list(const std::string& text);
// The same of numbers.
std::optional<std::vector<double>> float_list(const std::string& text);
// "torch.float32" and its kin.
std::optional<at::ScalarType> scalar_type(const std::string& text);

// Runs the first overload of ATen's `name` the arguments bind to (`op`: the recorded call, named in
// errors); its outputs, tensors or lists of them flattened in order.
std::vector<at::Tensor> run_op(const std::string& op, const std::string& name, const Args& args, const std::vector<at::Tensor>& tensors);
// Drops device= and non_blocking=: where a tensor is placed is not what is computed.
void drop_placement(Args& args);
// The arguments of a Sum bound's run on |inputs|: the scalars that scale a term (addcmul's value,
// addmm's alpha and beta) by their size, as a negative one would cancel terms the bound adds.
Args magnitude_args(Args args);
// The tensor or text given at `pos` or as `key`: nullopt or "" where the line gives none.
std::optional<at::Tensor> tensor_arg(const Args& args, const std::vector<at::Tensor>& t, size_t pos, const char* key);
std::string text_arg(const Args& args, size_t pos, const char* key);
// The dim a recorded call names at `pos` or as `key`, wrapped into x's rank; `fallback` where the
// line names none. Throws, naming `name`, where there is none.
int64_t dim_arg(const Args& args, size_t pos, const char* key, const at::Tensor& x, std::optional<int64_t> fallback, const std::string& name);

// x[key] (getitem) and x[key] = value (setitem, whose output is x after it).
std::vector<at::Tensor> run_index(bool set, const Args& a, const std::vector<at::Tensor>& tensors);
// The call's name, which the table knows it by (kernels/torch_calls.h).
std::string call_name(const std::string& op);

// torch.tensor(data) with data a number or nested lists or tuples of them as Python writes them
// ("0.25", "[[1, 2], [3, 4]]", "(0.5, 1.5)", "True"): its values in order, its shape, and what they
// are (bool, int, float). nullopt for anything else (a tensor in the list, a string).
struct Literal {
  std::vector<double> values;
  std::vector<int64_t> shape;
  bool any_float = false, all_bool = true;
};
std::optional<Literal> python_literal(const std::string& text);

}  // namespace parity
