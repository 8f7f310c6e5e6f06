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

// A call parity has no op for, run again in float64 from its recorded line (aten/torch_calls.cpp):
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

// The plugin's entry points, one typed table it exports as `parity_aten_plugin` and the loader
// finds once: a signature that drifts is a compile error in the plugin (aten/ops.cpp fills the
// table), a plugin of another version is refused by name, never called.
// The type the judge computes a torch call in (torch_call_computed_in).
enum class JudgeCompute { Float64, Float32, Float16, BFloat16 };

constexpr int kAtenPluginVersion = 5;  // 5: torch_call_computed_in
struct AtenPlugin {
  int version;
  // The `aten` backend's ops, by op name; the `aten:cuda*` ones (cudnn 1 or 0); why LibTorch
  // cannot run on a GPU here ("" when it can).
  const std::map<std::string, OpFn>* (*ops)();
  const std::map<std::string, OpFn>* (*cuda_ops)(int cudnn);
  const char* (*cuda_unavailable)();
  // What the plugin says about its implementation of an op ("" for nothing), for Backend::note.
  const char* (*note)(const char* op);
  // Golden data: the op in float64 through LibTorch, rounded once to float32; empty for an op
  // with no float64 variant.
  std::vector<Tensor> (*float64)(const std::string& line, const std::vector<Tensor>& inputs);
  // A TorchScript archive's parameters and buffers by name (--weights FILE).
  std::map<std::string, Tensor> (*read_torchscript)(const std::string& path);
  // TorchCallResult above; throws parity::Error saying why a call cannot be run again.
  TorchCallResult (*torch_call)(const std::string& line, const std::vector<Tensor>& inputs);
  // The same call computed in `compute`: Float64 as torch_call; another type as a kernel of that
  // type computes it, its inputs and Python numbers taken in the type and every step rounded to
  // it, which a step function shows (div(x, c, rounding_mode='trunc') truncates the quotient
  // rounded: CUDA's kernels in float32, torch 1.13's bfloat16 CPU kernel in bfloat16). Where the
  // call is element-wise or an operator the dispatcher runs; others as torch_call.
  TorchCallResult (*torch_call_computed_in)(const std::string& line, const std::vector<Tensor>& inputs, JudgeCompute compute);
  // Per output of the same call, how far its result may move when each float input moves by one
  // unit in the last place (the recorded inputs of a float64 run written as float32 are its own
  // rounded once): twice the sum over inputs of |f(that input one ulp up) - f|, float64. For an
  // integer or bool output (searchsorted, x > y), its steps: [..., 2] float64, how far below and
  // above the given output one ulp either way takes it, summed over inputs. `outputs`: what
  // torch_call gave on these inputs.
  // `sample_unit`: the unit roundoff an interpolation's kernel worked out where to sample in
  // (float32's, or the type of a half run on the CPU); 0 for none.
  std::vector<Tensor> (*torch_call_rounding)(const std::string& line, const std::vector<Tensor>& inputs,
                                             const std::vector<Tensor>& outputs, double sample_unit);
  // For a recorded call whose indices may pick among ties (sort, argsort, topk, median,
  // kthvalue, cummax: `tied` in torch_calls.tsv): "" when the side's indices are consistent with
  // its own input and the values it returned (another choice among ties, as correct), else why
  // not; throws parity::Error for another call, or one that returned no indices.
  std::string (*tied_indices)(const std::string& line, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs);
  // Which nms the aten backend runs (torchvision's, or the composed fallback and why), and the
  // composed fallback on its own (tests check it against torchvision's).
  const char* (*nms_kind)();
  Tensor (*nms_composed)(const std::string& line, const std::vector<Tensor>& inputs);
};

// Loads the plugin once and returns its table; throws parity::Error saying why the plugin could
// not be loaded, or that it is of another version.
const AtenPlugin& aten_plugin();

// The plugin's own definitions of the table's functions (the plugin's files only).
const std::map<std::string, OpFn>* aten_ops();
const std::map<std::string, OpFn>* aten_cuda_ops(int cudnn);
const char* aten_cuda_unavailable();
const char* aten_note_of(const char* op);
std::vector<Tensor> aten_float64(const std::string& line, const std::vector<Tensor>& in);
std::map<std::string, Tensor> aten_read_torchscript(const std::string& path);
TorchCallResult aten_torch_call(const std::string& line, const std::vector<Tensor>& in);
TorchCallResult aten_torch_call_computed_in(const std::string& line, const std::vector<Tensor>& in, JudgeCompute compute);
std::vector<Tensor> aten_torch_call_rounding(const std::string& line, const std::vector<Tensor>& in, const std::vector<Tensor>& base_outputs,
                                             double sample_unit);
std::string aten_tied_indices(const std::string& line, const std::vector<Tensor>& in, const std::vector<Tensor>& outputs);
// nms's two (aten_nms_kind, aten_nms_composed) are declared in its own folder, kernels/nms/nms.h.

}  // namespace parity
