#pragma once
// Any recorded `torch.<name>` call whose ATen operator LibTorch has, run again in float64 through
// the dispatcher (aten/torch_dispatch.cpp); for the aten plugin only.
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "core/tensor.h"
#include "kernels/aten/plugin.h"

namespace parity {

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

// A call whose indices may pick among tied values otherwise than LibTorch's (sort, argsort, topk,
// median, nanmedian, kthvalue, cummax, cummin: `tied` in the table): "" when `outputs` (values and
// indices, or argsort's indices alone) are consistent with the call's input, the indices picking
// those values along its dim (each once, for a sort; none after its position, for cummax) and
// argsort's ordering it; else why not. Throws for another call.
std::string tied_indices_check(const std::string& op, const std::string& line, const std::vector<Tensor>& in,
                               const std::vector<Tensor>& outputs);

}  // namespace parity
