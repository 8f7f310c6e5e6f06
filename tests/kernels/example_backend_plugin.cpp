// An example backend plugin, the model for a user's own (docs/EXTENDING.md, "Adding a backend"): backend
// `example` with one op, silu, computed in the input's own precision (float32 arithmetic for a
// float32 tensor, where the reference works in float64 and rounds once), so `parity replay
// --backend-plugin libparity_example_backend.so --vs example` checks a real, if tiny, kernel.
// Built by tests/CMakeLists.txt as a MODULE library linking parity_kernels.
#include <cmath>
#include <memory>
#include <string>

#include "kernels/backend.h"
#include "kernels/silu/silu.h"

namespace {

template <typename T> void silu_in(const parity::Tensor& x, parity::Tensor& y) {
  const T* in = x.data<T>();
  T* out = y.mutable_data<T>();
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] / (T(1) + std::exp(-in[i]));
}

// A typed entry point as the op folders have them: the parsed line and the input. unary_op
// parses the line and checks the inputs against it before calling this.
parity::Tensor silu_example(const parity::SiluParams&, const parity::Tensor& x) {
  parity::Tensor y(x.dtype(), x.shape());
  if (x.dtype() == parity::DType::Float64) {
    silu_in<double>(x, y);
  } else {
    silu_in<float>(x, y);
  }
  return y;
}

}  // namespace

// The entry point --backend-plugin calls once (kernels/backend.h, "Plugins").
extern "C" __attribute__((visibility("default"))) void parity_register_backends() {
  parity::register_backend("example", [](const std::string& name) {
    // Always usable here; a backend that needs a device passes OpTableBackend a reason function.
    auto b = std::make_unique<parity::OpTableBackend>(name);
    b->add(parity::SiluParams::kName, parity::unary_op(silu_example));
    return b;
  });
}
