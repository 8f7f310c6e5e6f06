// The LibTorch backends, `aten`, `aten:cuda` and `aten:cuda-nocudnn`: their ops come from the aten
// plugin (kernels/aten/plugin.h), loaded on the first call, where each _aten.cpp registers its
// own. Every op of op_table() is listed without loading the plugin; one the plugin lacks is an
// error of the call.
#include "core/error.h"
#include "kernels/aten/plugin.h"
#include "kernels/backend.h"
#include "kernels/op_traits.h"

namespace parity {

namespace {

class AtenBackend : public OpTableBackend {
 public:
  using OpTableBackend::OpTableBackend;

  // What the plugin says about its implementation of `op` (nms: torchvision's or the composed
  // one), the same for the CPU and the GPU backends, so replay prints it once.
  std::string note(std::string_view op) const override {
    try {
      const std::string o(op);
      const std::string n = aten_plugin().note(o.c_str());
      return n.empty() ? n : "aten " + o + ": " + n;
    } catch (const Error&) {
      return "";  // the plugin does not load: the aten cases say so as SKIPPED
    }
  }
};

// The aten implementation of `op`, from the plugin, which is loaded on the first aten call.
OpFn aten_op(const std::string& op) {
  return [op](const Call& call, const std::vector<Tensor>& inputs) {
    static const auto* ops = aten_plugin().ops();
    const auto it = ops->find(op);
    if (it == ops->end()) throw Error("the aten plugin has no " + op);
    return it->second(call, inputs);
  };
}

OpFn aten_cuda_op(const std::string& op, int cudnn) {
  return [op, cudnn](const Call& call, const std::vector<Tensor>& inputs) {
    const auto* ops = aten_plugin().cuda_ops(cudnn);
    const auto it = ops->find(op);
    if (it == ops->end()) throw Error("the aten plugin has no CUDA " + op);
    return it->second(call, inputs);
  };
}

// Why LibTorch cannot run on a GPU here (the plugin does not load, or its LibTorch has no CUDA or
// sees no GPU); empty when it can.
std::string aten_cuda_unavailable() {
  try {
    return aten_plugin().cuda_unavailable();
  } catch (const Error& e) {
    return e.what();
  }
}

// Ranks: ref 0, aten 10, cuda 20, aten:cuda 30, aten:cuda-nocudnn 40.
const BackendRegistrar kAten(
    "aten",
    [](const std::string& name) {
      auto b = std::make_unique<AtenBackend>(name);
      for (const OpTraits& t : op_table()) b->add(t.name, aten_op(t.name));
      return b;
    },
    10);

// LibTorch's CUDA kernels (aten/ops.cpp): with cuDNN, and without (ATen's own convolution).
BackendFactory aten_cuda(int cudnn) {
  return [cudnn](const std::string& name) {
    auto b = std::make_unique<AtenBackend>(name, aten_cuda_unavailable);
    for (const OpTraits& t : op_table()) b->add(t.name, aten_cuda_op(t.name, cudnn));
    return b;
  };
}
const BackendRegistrar kAtenCuda("aten:cuda", aten_cuda(1), 30, Runs::OnGpu);
const BackendRegistrar kAtenCudaNoCudnn("aten:cuda-nocudnn", aten_cuda(0), 40, Runs::OnGpu);

}  // namespace

}  // namespace parity
