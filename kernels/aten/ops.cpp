// The plugin side: libparity_aten.so's entry points. This file and the _aten.cpp files are the
// plugin; they alone include LibTorch. Each op's _aten.cpp registers its own entries
// (PARITY_ATEN_OP, PARITY_ATEN_FLOAT64, PARITY_ATEN_NOTE in kernels/aten/util.h): this file
// names no op.
#include <map>
#include <mutex>
#include <string>

#include "kernels/aten/plugin.h"
#include "kernels/aten/util.h"
#include "kernels/nms/nms.h"  // its plugin entries, declared in its own folder

#include <ATen/Context.h>
#include <torch/version.h>

// Each op runs in its call's precision: a half call's tensors reach LibTorch as float16 or
// bfloat16 (in_call_precision), so its own half kernels run, or it says it has none.
const std::map<std::string, parity::OpFn>* parity::aten_ops() {
  static const std::map<std::string, parity::OpFn> ops = [] {
    std::map<std::string, parity::OpFn> m;
    for (const auto& [name, fn] : parity::aten_table(parity::AtenTable::Op)) m[name] = parity::in_call_precision(fn);
    return m;
  }();
  return &ops;
}

// What the plugin says about its implementation of `op` (nms: torchvision's or the composed
// fallback, and why); "" when nothing. Asked once per op: the answer is kept.
const char* parity::aten_note_of(const char* op) {
  static std::mutex mutex;
  static std::map<std::string, std::string> notes;  // nodes never move: c_str() stays valid
  std::lock_guard<std::mutex> lock(mutex);
  auto it = notes.find(op);
  if (it == notes.end()) it = notes.emplace(op, parity::aten_note(op)).first;
  return it->second.c_str();
}

// Golden data: the op in float64 through LibTorch (float32 inputs widened exactly), rounded once
// to float32. Empty for ops where float64 changes the semantics or adds nothing (those that
// register no float64 variant).
std::vector<parity::Tensor> parity::aten_float64(
    const std::string& line, const std::vector<parity::Tensor>& in) {
  using namespace parity;
  const Call call(line);
  return aten_call(call.op().c_str(), [&]() -> std::vector<Tensor> {
    const std::map<std::string, OpFn>& variants = aten_table(AtenTable::Float64);
    const auto it = variants.find(call.op());
    return it == variants.end() ? std::vector<Tensor>{} : it->second(call, in);
  });
}

// The `aten:cuda` backends: the same ATen calls as aten_ops, with their tensors on the GPU
// (to_aten copies up, from_aten copies back). cuDNN on (`aten:cuda`) or off (`aten:cuda-nocudnn`:
// ATen's own CUDA convolution, slow_conv2d's im2col + GEMM). TF32 off in cuDNN and cuBLAS, which
// PyTorch enables for convolutions by default: parity judges float32 arithmetic.
namespace {
std::mutex& aten_cuda_mutex() {
  static std::mutex m;  // one op at a time: the cuDNN switch is process-wide
  return m;
}

std::map<std::string, parity::OpFn> ops_on_cuda(bool cudnn) {
  std::map<std::string, parity::OpFn> ops;
  for (const auto& [name, cpu_fn] : *parity::aten_ops()) {
    ops[name] = [fn = cpu_fn, cudnn](const parity::Call& call, const std::vector<parity::Tensor>& in) {
      std::lock_guard<std::mutex> lock(aten_cuda_mutex());
      at::globalContext().setUserEnabledCuDNN(cudnn);
      at::globalContext().setAllowTF32CuDNN(false);
      at::globalContext().setAllowTF32CuBLAS(false);
      const parity::AtenDeviceScope on_gpu(at::Device(at::kCUDA, 0));
      return fn(call, in);
    };
  }
  return ops;
}
}  // namespace

// Empty when LibTorch can run on a GPU here, else why not (the SKIPPED reason).
const char* parity::aten_cuda_unavailable() {
  static const std::string why = []() -> std::string {
    if (at::hasCUDA()) return "";
    return "LibTorch " TORCH_VERSION " has no usable CUDA here (a CPU-only LibTorch, or no GPU)";
  }();
  return why.c_str();
}

const std::map<std::string, parity::OpFn>* parity::aten_cuda_ops(int cudnn) {
  static const std::map<std::string, parity::OpFn> with = ops_on_cuda(true), without = ops_on_cuda(false);
  return cudnn ? &with : &without;
}

// The plugin's one entry point: its table, checked by the loader against kAtenPluginVersion. A
// function whose signature drifted from aten/plugin.h no longer compiles here.
extern "C" __attribute__((visibility("default"))) const parity::AtenPlugin* parity_aten_plugin() {
  static const parity::AtenPlugin plugin = {
      parity::kAtenPluginVersion,     parity::aten_ops,         parity::aten_cuda_ops,    parity::aten_cuda_unavailable,
      parity::aten_note_of,           parity::aten_float64,     parity::aten_read_torchscript, parity::aten_torch_call,
      parity::aten_torch_call_computed_in, parity::aten_torch_call_rounding, parity::aten_tied_indices, parity::aten_nms_kind,
      parity::aten_nms_composed,
  };
  return &plugin;
}
