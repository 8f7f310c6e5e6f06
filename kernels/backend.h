#pragma once
// Backends and the op registry: a caller runs any op by its one-line form on any backend,
//   backend("ref").run("conv2d x=1x3x8x8 w=4x3x3x3 bias pad=1", {x, w, b})
// Backends register themselves (below), each from its own file, so that adding one edits no
// generic code. Those built in: `ref` (the CPU reference) and `cuda` (the project's kernels:
// listed always, usable when built with CUDA and a GPU is present), kernels/project_backends.cpp;
// `aten` (the same op through LibTorch), `aten:cuda` and `aten:cuda-nocudnn` (LibTorch's CUDA
// kernels, with or without cuDNN: usable when the LibTorch parity was built against has CUDA and
// sees a GPU), kernels/aten/backends.cpp; and `faulty:<defect>[:<n>]`, the reference with a
// planted defect for testing the harness (kernels/faulty/faulty.h). A user's own backends come
// from a plugin (`--backend-plugin lib.so`, "Plugins" below).
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"
#include "kernels/call.h"

namespace parity {

// Throws parity::Error naming the op and the tensor when `inputs` do not match `specs`.
void check_inputs(std::string_view op, const std::vector<TensorSpec>& specs, const std::vector<Tensor>& inputs);

// A float32 tensor rounded to `h` (a half-precision call's inputs and outputs: kernels/call.h),
// as a new tensor; other dtypes, and HalfType::None, as they are.
Tensor rounded_to(const Tensor& t, HalfType h);
// rounded_to on each.
void round_floats(std::vector<Tensor>& tensors, HalfType h);

// An op implementation as the registry stores it: the call and its inputs in, outputs out.
using OpFn = std::function<std::vector<Tensor>(const Call& call, const std::vector<Tensor>& inputs)>;

// Adapts an op's typed entry point to OpFn: takes the call's params P, checks the inputs against
// the call's so the adapter may index them, then `fn(params, inputs)`. Typed entry points check
// their inputs again, since tests call them directly.
template <typename P, typename Fn> OpFn bind_op(Fn fn) {
  return [fn](const Call& call, const std::vector<Tensor>& inputs) {
    const P& p = call.params<P>();
    check_inputs(P::kName, call.inputs(), inputs);
    return fn(p, inputs);
  };
}

// `fn` run in its call's precision (HalfScope, kernels/call.h): a half call's kernels store its type
// (the cuda backend: kernels/cuda_util.h, "Half precision"; aten: LibTorch is handed its tensors in
// that type, kernels/aten/util.h).
inline OpFn in_call_precision(OpFn fn) {
  return [fn = std::move(fn)](const Call& call, const std::vector<Tensor>& in) {
    const HalfScope scope(call.half());
    return fn(call, in);
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
  // Throws parity::Error for bad inputs, an op it lacks or an unusable backend.
  virtual std::vector<Tensor> run(const Call& call, const std::vector<Tensor>& inputs) const = 0;
  // The same from a line, parsed here (throws also for an unknown op or bad parameters).
  std::vector<Tensor> run(std::string_view line, const std::vector<Tensor>& inputs) const { return run(Call(line), inputs); }
  // A model run starts: backends that count calls (faulty) start counting again.
  virtual void begin_run() const {}
  // The model run ended: a backend that was to do something on a call the run never made (faulty
  // with a call number beyond the run's) throws parity::Error saying so.
  virtual void end_run() const {}
  // One line worth printing before running `op` here, when which implementation runs is not
  // obvious from the backend's name (the aten backends: which nms, torchvision's or the composed
  // one, and why); empty by default. Never throws: a backend that cannot say returns "".
  virtual std::string note(std::string_view /*op*/) const { return ""; }
};

// The backend most are: a table of ops, each run by its OpFn. run() refuses an op nobody knows,
// then one it cannot run here (saying why, which says more than which op it lacks: a build
// without CUDA has none), then one missing from the table.
class OpTableBackend : public Backend {
 public:
  // `reason` is asked on every call (empty: usable here); null means always usable.
  explicit OpTableBackend(std::string name, std::function<std::string()> reason = nullptr);
  void add(const std::string& op, OpFn fn);

  const std::string& name() const override { return name_; }
  std::string unavailable_reason() const override;
  bool supports(std::string_view op) const override;
  using Backend::run;
  std::vector<Tensor> run(const Call& call, const std::vector<Tensor>& inputs) const override;

 private:
  std::string name_;
  std::function<std::string()> reason_;
  std::map<std::string, OpFn, std::less<>> ops_;
};

// Throws parity::Error listing the known names.
const Backend& backend(std::string_view name);
// How each registered backend is named, in rank order: "ref", ..., "faulty:<defect>[:<n>]".
std::vector<std::string> backend_names();
// Whether the named backend computes on the GPU (cuda, aten:cuda*): its ops run one at a time
// and its device is the GPU's name. False for a name nobody registered.
bool runs_on_gpu(std::string_view name);

// Runs `call` on `b`. A half call the backend has no kernel for (Unsupported: LibTorch's CPU has
// no float16 convolution) runs in float32 on the same half values, its outputs rounded to the
// type: what a half kernel gives within its rounding. `why_float32` (optional) gets the
// backend's reason when that happened, else "". `parity run` takes such a layer so, and the
// judge judges with it.
std::vector<Tensor> run_in_type(const Backend& b, const Call& call, const std::vector<Tensor>& inputs, std::string* why_float32 = nullptr);

// ---- Registering a backend ----
// A backend registers itself from its own file with a registrar at namespace scope:
//   namespace { const BackendRegistrar kMine("mine", [](const std::string& name) {
//     auto b = std::make_unique<OpTableBackend>(name);
//     b->add(SiluParams::kName, unary_op(silu_mine));
//     return b;
//   }); }
// Registrars in libparity_kernels run when it loads, before main; the registry they fill is a
// function-local static, so the order in which files initialise does not matter. The factory
// runs on the backend's first use (not at load: op_table() and plugins may not be ready then),
// and the backend is kept for the process (faulty's call counter lives across the ops of a run).

// A backend's own factory: its name in, the backend out. For a family it gets the whole name
// asked for ("faulty:bias:20") and throws parity::Error for one it does not accept.
using BackendFactory = std::function<std::unique_ptr<Backend>(const std::string& name)>;

enum class Runs { OnCpu, OnGpu };

// Where a backend appears in backend_names() (and so in --backend's help): lowest rank first,
// equal ranks in registration order. The built-in ones take 0..99; a plugin's go after them.
inline constexpr int kPluginRank = 1000;

// Registers backend `name`; throws parity::Error when the name is taken.
void register_backend(const std::string& name, BackendFactory make, int rank = kPluginRank, Runs runs = Runs::OnCpu);
// Registers a family: every name that starts with `prefix` ("faulty:") and is not registered on
// its own, each made by `make` on its first use. `usage` is how backend_names() lists it
// ("faulty:<defect>[:<n>]"). Throws parity::Error when the prefix is taken.
void register_backend_family(const std::string& prefix, const std::string& usage, BackendFactory make, int rank = kPluginRank,
                             Runs runs = Runs::OnCpu);

struct BackendRegistrar {
  BackendRegistrar(const std::string& name, BackendFactory make, int rank = kPluginRank, Runs runs = Runs::OnCpu) {
    register_backend(name, std::move(make), rank, runs);
  }
};
struct BackendFamilyRegistrar {
  BackendFamilyRegistrar(const std::string& prefix, const std::string& usage, BackendFactory make, int rank = kPluginRank,
                         Runs runs = Runs::OnCpu) {
    register_backend_family(prefix, usage, std::move(make), rank, runs);
  }
};

// ---- Plugins ----
// A user's backends live in a shared library of their own, loaded by `--backend-plugin lib.so`
// (run, replay, bench, golden check, compare and bisect; repeatable). It is built against this
// tree's headers with the same compiler, links libparity_kernels, and exports one entry point
// that registers its backends with the functions above:
//   extern "C" __attribute__((visibility("default"))) void parity_register_backends() {
//     parity::register_backend("mine", [](const std::string& name) { ... });
//   }
// tests/kernels/example_backend_plugin.cpp is a complete one (backend `example`, one op). An
// explicit entry point rather than registrars that run on dlopen: the loader can then tell a
// library that is no plugin from one that is, and a registration error names the file.
inline constexpr const char* kRegisterBackendsSymbol = "parity_register_backends";
using RegisterBackendsFn = void (*)();

// Loads the plugin at `path` and calls its entry point once (loading the same file again does
// nothing). Throws parity::Error, one line naming the file, for a missing or unloadable file, one
// without the entry point, or a registration it refuses (a name already taken).
void load_backend_plugin(const std::string& path);

// What the registry knows about each op regardless of backend.
std::vector<std::string> op_names();
bool is_known_op(std::string_view op);  // one of op_names()
std::string op_name_of(std::string_view line);  // the first word
std::string canonical_line(std::string_view line);
std::vector<TensorSpec> op_inputs(std::string_view line);

}  // namespace parity
