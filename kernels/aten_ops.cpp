// The plugin side: libparity_aten.so's entry points. This file and the _aten.cpp files are the
// plugin; they alone include LibTorch.
#include <map>
#include <mutex>
#include <string>

#include "kernels/add/add.h"
#include "kernels/argsort/argsort.h"
#include "kernels/aten_plugin.h"
#include "kernels/cat/cat.h"
#include "kernels/conv2d/conv2d.h"
#include "kernels/detect_decode/detect_decode.h"
#include "kernels/index/index.h"
#include "kernels/max_dim/max_dim.h"
#include "kernels/maxpool2d/maxpool2d.h"
#include "kernels/nms/nms.h"
#include "kernels/nonzero/nonzero.h"
#include "kernels/sigmoid/sigmoid.h"
#include "kernels/silu/silu.h"
#include "kernels/threshold/threshold.h"
#include "kernels/upsample_nearest2d/upsample_nearest2d.h"
#include "kernels/aten_util.h"

#include <ATen/Context.h>
#include <ATen/ops/conv2d.h>
#include <ATen/ops/silu.h>
#include <torch/version.h>

extern "C" __attribute__((visibility("default"))) const std::map<std::string, parity::OpFn>* parity_aten_ops() {
  using namespace parity;
  static const std::map<std::string, OpFn> ops = {
      {"conv2d", conv2d_op(conv2d_aten)},
      {"silu", unary_op(silu_aten)},
      {"add", binary_op(add_aten)},
      {"cat", cat_op(cat_aten)},
      {"maxpool2d", unary_op(maxpool2d_aten)},
      {"upsample_nearest2d", unary_op(upsample_nearest2d_aten)},
      {"sigmoid", unary_op(sigmoid_aten)},
      {"detect_decode", unary_op(detect_decode_aten)},
      {"threshold", unary_op(threshold_aten)},
      {"nonzero", unary_op(nonzero_aten)},
      {"index", index_op(index_aten)},
      {"max_dim", max_dim_op(max_dim_aten)},
      {"argsort", unary_op(argsort_aten)},
      {"nms", nms_op(nms_aten)},
  };
  return &ops;
}

// Which nms the aten backend runs (replay says it): torchvision's, or the composed fallback and why.
extern "C" __attribute__((visibility("default"))) const char* parity_aten_nms_kind() {
  static const std::string kind = parity::nms_aten_kind();
  return kind.c_str();
}

// The composed fallback on its own, whatever nms_aten runs: tests check it against torchvision's.
extern "C" __attribute__((visibility("default"))) parity::Tensor parity_aten_nms_composed(const std::string& line,
                                                                                        const std::vector<parity::Tensor>& in) {
  const parity::NmsParams p = parity::NmsParams::parse(line);
  parity::check_inputs(parity::NmsParams::kName, p.inputs(), in);
  return parity::nms_composed_aten(p, parity::nms_offset_boxes(p, in), in[1]);
}

// Golden data: the op in float64 through LibTorch (float32 inputs widened exactly), rounded once
// to float32. Empty for ops where float64 changes the semantics or adds nothing.
extern "C" __attribute__((visibility("default"))) std::vector<parity::Tensor> parity_aten_float64(
    const std::string& line, const std::vector<parity::Tensor>& in) {
  using namespace parity;
  const std::string op = op_name_of(line);
  auto f64 = [](const Tensor& t) { return to_aten(t).to(at::kDouble); };
  auto f32 = [](const at::Tensor& t) { return from_aten(t.to(at::kFloat)); };
  return aten_call(op.c_str(), [&]() -> std::vector<Tensor> {
    if (op == "conv2d") {
      const Conv2dParams p = Conv2dParams::parse(line);
      check_conv2d_inputs(p, in[0], in[1], p.bias ? &in[2] : nullptr);
      const c10::optional<at::Tensor> b = p.bias ? c10::optional<at::Tensor>(f64(in[2])) : c10::nullopt;
      return {f32(at::conv2d(f64(in[0]), f64(in[1]), b, {p.stride_h, p.stride_w}, {p.pad_h, p.pad_w}, {p.dil_h, p.dil_w},
                             p.groups))};
    }
    if (op == "silu") {
      const SiluParams p = SiluParams::parse(line);
      check_inputs(SiluParams::kName, p.inputs(), in);
      if (p.dtype == DType::Float32) return {f32(at::silu(f64(in[0])))};
    }
    return {};
  });
}

// The `aten:cuda` backends: the same ATen calls as parity_aten_ops, with their tensors on the GPU
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
  for (const auto& [name, cpu_fn] : *parity_aten_ops()) {
    ops[name] = [fn = cpu_fn, cudnn](std::string_view line, const std::vector<parity::Tensor>& in) {
      std::lock_guard<std::mutex> lock(aten_cuda_mutex());
      at::globalContext().setUserEnabledCuDNN(cudnn);
      at::globalContext().setAllowTF32CuDNN(false);
      at::globalContext().setAllowTF32CuBLAS(false);
      const parity::AtenDeviceScope on_gpu(at::Device(at::kCUDA, 0));
      return fn(line, in);
    };
  }
  return ops;
}
}  // namespace

// Empty when LibTorch can run on a GPU here, else why not (the SKIPPED reason).
extern "C" __attribute__((visibility("default"))) const char* parity_aten_cuda_unavailable() {
  static const std::string why = []() -> std::string {
    if (at::hasCUDA()) return "";
    return "LibTorch " TORCH_VERSION " has no usable CUDA here (a CPU-only LibTorch, or no GPU)";
  }();
  return why.c_str();
}

extern "C" __attribute__((visibility("default"))) const std::map<std::string, parity::OpFn>* parity_aten_cuda_ops(int cudnn) {
  static const std::map<std::string, parity::OpFn> with = ops_on_cuda(true), without = ops_on_cuda(false);
  return cudnn ? &with : &without;
}
