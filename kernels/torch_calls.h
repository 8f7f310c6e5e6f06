#pragma once
// What parity knows of each PyTorch call: one table (python/parity_torch/torch_calls.tsv, built into
// parity), read here by compare and the aten plugin, and by the recorder in Python. Its header says
// what each column means.
#include <string>
#include <vector>

namespace parity {

enum class TorchBound { None, Exact, Rounded, Sum, Softmax, LogSoftmax, LogSumExp, Cosine, LayerNorm, GroupNorm, InputAndOutput, OneAndOutput, Positive, LogLoss, LossTerms, Window, Steps, Moments, Attention, RmsNorm, Fourier };

struct TorchCall {
  std::string name;   // as Python gives it
  std::string aten;   // the ATen operator run again; empty: none
  std::string dtype;  // the dtype a cast by name gives ("int64" for x.long()); empty: none
  TorchBound bound = TorchBound::None;
  bool placement = false, metadata = false, python_read = false, composite = false, copy = false, cast = false,
       fills = false, uninitialised = false, tied = false, arithmetic = false, reflected = false, samples = false,
       lowp = false, fp32_sum = false, bias_after = false, half_sum = false, half_weights = false, half_steps = false, literal = false,
       exact_terms = false, complex_out = false, half_inside = false, first_output = false, fp32_autocast = false,
       number_in_type = false, allocates = false;  // allocates: the recorder's alone (it fills such memory)
};

// The call's name as the table keys it, from the op a dump names it by (torch.Tensor.add_,
// torch.nn.functional.silu, torch.zeros): the last word as Python gave it where the table has it,
// else the call an in-place form (add_, __iadd__) or an operator (__matmul__) stands for; "" for
// an op that is not a torch call (quantized.linear_dynamic). torchvision's operators are
// recorded as torchvision.<name> (torchvision.roi_align).
std::string torch_call_name(const std::string& op);

// The table's row for that op; null when the table has none.
const TorchCall* torch_call(const std::string& op);
// Whether a layer's op is a call parity_torch recorded by its PyTorch name (`torch.`,
// `torchvision.`): one parity has no op for, which only LibTorch can run again.
bool is_torch_call(const std::string& op);

// Whether a recorded norm (norm, linalg_norm, linalg_vector_norm: p or ord, then dim, by keyword
// or as the line's arg1 and arg2) is one whose half CPU kernel sums in float32 (torch 1.13): the
// 2-norm (p absent, None, 2, 'fro') or a max (inf), over the trailing dims of its rank-`rank`
// input, all of them when no dim is named. Other p (1, 3, 0.5) sum in the type wherever they run.
bool norm_sums_in_float32(const std::string& line, size_t rank);

// Whether an argument of that name places a tensor (device=, non_blocking=) instead of saying what
// is computed.
bool placement_argument(const std::string& key);

// Every row, in the table's order (for tests and --help texts).
const std::vector<TorchCall>& torch_calls();

}  // namespace parity
