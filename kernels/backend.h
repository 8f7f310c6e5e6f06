#pragma once
// Backends and the op registry: a caller runs any op by its one-line form on any backend,
//   backend("ref").run("conv2d x=1x3x8x8 w=4x3x3x3 bias pad=1", {x, w, b})
// Backends: `ref` (the CPU reference), `aten` (the same op through LibTorch), `cuda` (the
// project's kernels: listed always, usable when built with CUDA and a GPU is present),
// `aten:cuda` and `aten:cuda-nocudnn` (LibTorch's CUDA kernels, with or without cuDNN: usable
// when the LibTorch parity was built against has CUDA and sees a GPU), and
// `faulty:<defect>[:<n>]`, the reference with a planted defect for testing the harness
// (kernels/faulty/faulty.h).
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"

namespace parity {

// One input an op expects: its role name, dtype and shape.
struct TensorSpec {
  std::string name;
  DType dtype;
  Shape shape;
};

// Throws parity::Error naming the op and the tensor when `inputs` do not match `specs`.
void check_inputs(std::string_view op, const std::vector<TensorSpec>& specs, const std::vector<Tensor>& inputs);

// An op implementation as the registry stores it: the op's line and its inputs in, outputs out.
using OpFn = std::function<std::vector<Tensor>(std::string_view line, const std::vector<Tensor>& inputs)>;

// Adapts an op's typed entry point to OpFn: parses the line with P (which validates it), checks
// the inputs against P::inputs() so the adapter may index them, then `call(params, inputs)`.
// Typed entry points check their inputs again, since tests call them directly.
template <typename P, typename Call> OpFn bind_op(Call call) {
  return [call](std::string_view line, const std::vector<Tensor>& inputs) {
    const P p = P::parse(line);
    check_inputs(P::kName, p.inputs(), inputs);
    return call(p, inputs);
  };
}

// Adapters for typed entry points Tensor f(const P&, const Tensor& x[, const Tensor& y]).
template <typename P> OpFn unary_op(Tensor (*fn)(const P&, const Tensor&)) {
  return bind_op<P>([fn](const P& p, const std::vector<Tensor>& in) { return std::vector<Tensor>{fn(p, in[0])}; });
}
template <typename P> OpFn binary_op(Tensor (*fn)(const P&, const Tensor&, const Tensor&)) {
  return bind_op<P>([fn](const P& p, const std::vector<Tensor>& in) { return std::vector<Tensor>{fn(p, in[0], in[1])}; });
}

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const std::string& name() const = 0;
  // Empty when the backend can run here; otherwise why not (the SKIPPED reason).
  virtual std::string unavailable_reason() const = 0;
  virtual bool supports(std::string_view op) const = 0;
  // Throws parity::Error for an unknown op, bad parameters, bad inputs or an unusable backend.
  virtual std::vector<Tensor> run(std::string_view line, const std::vector<Tensor>& inputs) const = 0;
  // A model run starts: backends that count calls (faulty) start counting again.
  virtual void begin_run() const {}
};

// Throws parity::Error listing the known names.
const Backend& backend(std::string_view name);
std::vector<std::string> backend_names();
// Whether the named backend computes on the GPU (cuda, aten:cuda*): its ops run one at a time
// and its device is the GPU's name.
bool runs_on_gpu(std::string_view name);

// What the registry knows about each op regardless of backend.
std::vector<std::string> op_names();
bool is_known_op(std::string_view op);  // one of op_names()
std::string op_name_of(std::string_view line);  // the first word
std::string canonical_line(std::string_view line);
std::vector<TensorSpec> op_inputs(std::string_view line);

}  // namespace parity
