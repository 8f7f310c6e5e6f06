#pragma once
// The `aten` backend lives in a plugin, libparity_aten.so, loaded on first use: LibTorch takes
// half a second to load and register its operators, a cost that parity inspect, compare or
// a ref-only run should not pay. Only the plugin links LibTorch; it is found beside
// libparity_kernels.so (or at $PARITY_ATEN_PLUGIN).
#include <map>
#include <string>

#include "core/tensor.h"
#include "kernels/backend.h"

namespace parity {

// The plugin's entry points (extern "C", looked up by name).
using AtenOpsFn = const std::map<std::string, OpFn>* (*)();
using AtenReadTorchscriptFn = std::map<std::string, Tensor> (*)(const std::string& path);
using AtenFloat64Fn = std::vector<Tensor> (*)(const std::string& line, const std::vector<Tensor>& inputs);
using AtenNmsKindFn = const char* (*)();
using AtenCudaOpsFn = const std::map<std::string, OpFn>* (*)(int cudnn);
using AtenCudaUnavailableFn = const char* (*)();
using AtenNmsComposedFn = Tensor (*)(const std::string& line, const std::vector<Tensor>& inputs);
// A call parity has no op for, run again in float64 from its recorded line (aten_torch_calls.cpp):
// its outputs and, for a call whose correct float32 result may stray further than a few roundings
// (a sum of K terms: linear, matmul, softmax's denominator, layer_norm's statistics), per output
// the float64 tensor S and the count K such that a correct computation is within the dot-product
// bound (K + 2) 2^-24 S_i of the exact value at element i (compare/tolerance.h). An output
// without one has an undefined S.
struct TorchCallResult {
  std::vector<Tensor> outputs;
  std::vector<Tensor> bound_sums;    // empty, or one per output
  std::vector<int64_t> bound_terms;  // K, one per output with a bound
};
// Throws parity::Error saying why a call cannot be run again.
using AtenTorchCallFn = TorchCallResult (*)(const std::string& line, const std::vector<Tensor>& inputs);
// Per output of the same call, how far its result may move when each float input moves by one
// unit in the last place (the recorded inputs of a float64 run written as float32 are its own
// rounded once): twice the sum over inputs of |f(that input one ulp up) - f|, float64; undefined
// for an output that is not float. `outputs`: what AtenTorchCallFn gave on these inputs.
using AtenTorchCallRoundingFn = std::vector<Tensor> (*)(const std::string& line, const std::vector<Tensor>& inputs,
                                                        const std::vector<Tensor>& outputs);
// For a recorded sort or topk whose indices differ from the judge's: "" when the side's indices
// pick, from its own input, exactly the values it returned (another order of ties, as correct),
// else why not; throws parity::Error for a call that is not a sort or topk.
using AtenTiedIndicesFn = std::string (*)(const std::string& line, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs);
// What the plugin says about its implementation of an op (empty: nothing), for Backend::note.
using AtenNoteFn = const char* (*)(const char* op);

// Loads the plugin once and returns the named entry point; throws parity::Error saying why the
// plugin could not be loaded.
void* aten_plugin_symbol(const char* name);

}  // namespace parity
