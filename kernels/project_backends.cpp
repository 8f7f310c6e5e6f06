// The project's own backends, `ref` and `cuda`: one entry per op of op_table(), from the ref and
// cuda fields its folder gives (kernels/op_traits.h). Registered here rather than in backend.cpp
// so that the registry knows no backend by name.
#include "core/error.h"
#include "core/gpu.h"
#include "kernels/backend.h"
#include "kernels/op_traits.h"

namespace parity {

namespace {

// Ranks 0 and 20: backend_names() lists ref, aten (10), cuda, then the aten:cuda ones.
const BackendRegistrar kRef(
    "ref",
    [](const std::string& name) {
      auto b = std::make_unique<OpTableBackend>(name);
      for (const OpTraits& t : op_table()) {
        if (t.ref) b->add(t.name, t.ref);
      }
      return b;
    },
    0);

// Listed always; says why it cannot run in a build without CUDA or on a machine without a GPU.
const BackendRegistrar kCuda(
    "cuda",
    [](const std::string& name) {
      auto b = std::make_unique<OpTableBackend>(name, [] {
        const GpuStatus& s = gpu_status();
        if (!s.built) return s.reason;
        return s.available ? std::string() : s.reason;
      });
      for (const OpTraits& t : op_table()) {
        if (t.cuda) b->add(t.name, in_call_precision(t.cuda));
      }
      return b;
    },
    20, Runs::OnGpu);

}  // namespace

}  // namespace parity
