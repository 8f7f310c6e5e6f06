#pragma once
// Any recorded `torch.<name>` call whose ATen operator LibTorch has, run again in float64 through
// the dispatcher (aten/torch_dispatch.cpp); for the aten plugin only.
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>

#include "core/tensor.h"
#include "kernels/aten/plugin.h"

namespace parity {

// A Python number as repr() writes it (2, -0.5, 1e-05, inf, nan, True); nullopt for anything else.
std::optional<double> python_number(const std::string& text);
// A Python int as repr() writes it (2, -3): neither bool, point, exponent, inf nor nan.
bool integral_text(const std::string& text);
// The Scalar PyTorch makes of that number: an int for an int (integer tensors refuse a floating
// one), else a double; nullopt for anything else.
std::optional<c10::Scalar> python_scalar(const std::string& text);

// `op` (torch.Tensor.<name>, torch.nn.functional.<name>, torch.<name>) with the recorded line and
// the call's tensors in recorded order. Throws parity::Error saying why the call is not one this
// runs: an operator LibTorch lacks, one whose correct results are not known to stay within a
// bound parity can state, a random one, an argument the line does not give in full.
TorchCallResult dispatch_torch_call(const std::string& op, const std::string& line, const std::vector<Tensor>& in);

// The same for a call with complex tensors (`complex[k]`: in[k] is one, stored as its real view,
// torch.view_as_real's trailing dim of 2; its line field ends in "c"): run in complex128, its
// complex outputs returned as real views, each component within K roundings of S, the output's
// modulus (element-wise calls: a product's real part ac - bd is within a few units of |x||w| =
// |xw|) or the call on the inputs' moduli (sums). Calls of another bound are refused.
TorchCallResult complex_torch_call(const std::string& op, const std::string& line, const std::vector<Tensor>& in,
                                   const std::vector<bool>& complex);

// A normalisation's bound S (layer_norm's, group_norm's): x normalised over `reduce` of
// `grouped` (x's values, each group along reduce), with |weight| and |bias| shaped to broadcast.
at::Tensor normalisation_sums(const at::Tensor& x, const at::Tensor& grouped, at::IntArrayRef reduce, double eps, const at::Tensor& w,
                              const std::optional<at::Tensor>& b, const at::Tensor& y);

// A call whose indices may pick among tied values otherwise than LibTorch's (sort, argsort, topk,
// median, nanmedian, kthvalue, cummax, cummin: `tied` in the table): "" when `outputs` (values and
// indices, or argsort's indices alone) are consistent with the call's input, the indices picking
// those values along its dim (each once, for a sort; none after its position, for cummax) and
// argsort's ordering it; else why not. Throws for another call.
std::string tied_indices_check(const std::string& op, const std::string& line, const std::vector<Tensor>& in,
                               const std::vector<Tensor>& outputs);

}  // namespace parity
