#include "kernels/backend.h"

#include <map>
#include <memory>
#include <mutex>
#include <sstream>

#include "core/error.h"
#include "core/gpu.h"
#include "kernels/aten_plugin.h"
#include "kernels/faulty/faulty.h"
#include "kernels/op_traits.h"

namespace parity {

void check_inputs(std::string_view op, const std::vector<TensorSpec>& specs, const std::vector<Tensor>& inputs) {
  const std::string o(op);
  if (inputs.size() != specs.size()) {
    throw Error(o + ": expects " + std::to_string(specs.size()) + " input tensors, got " +
                std::to_string(inputs.size()));
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorSpec& s = specs[i];
    const Tensor& t = inputs[i];
    if (!t.defined()) throw Error(o + ": input " + s.name + " is undefined");
    if (t.dtype() != s.dtype || t.shape() != s.shape) {
      throw Error(o + ": input " + s.name + " is " + std::string(dtype_name(t.dtype())) + " " + t.shape().str() +
                  ", the line says " + std::string(dtype_name(s.dtype)) + " " + s.shape.str());
    }
  }
}

namespace {

class TableBackend : public Backend {
 public:
  TableBackend(std::string name, std::function<std::string()> reason) : name_(std::move(name)), reason_(std::move(reason)) {}

  void add(const std::string& op, OpFn fn) { ops_[op] = std::move(fn); }

  const std::string& name() const override { return name_; }
  std::string unavailable_reason() const override { return reason_(); }
  bool supports(std::string_view op) const override { return ops_.count(std::string(op)) > 0; }

  std::vector<Tensor> run(std::string_view line, const std::vector<Tensor>& inputs) const override {
    const std::string op = op_name_of(line);
    op_traits(op);  // throws for an op nobody knows
    // Why the backend cannot run says more than which op it lacks (a build without CUDA has none).
    if (const std::string why = unavailable_reason(); !why.empty()) {
      throw Error("backend " + name_ + " cannot run here: " + why);
    }
    const auto it = ops_.find(op);
    if (it == ops_.end()) throw Error("backend " + name_ + " has no " + op + " implementation");
    return it->second(line, inputs);
  }

 private:
  std::string name_;
  std::function<std::string()> reason_;
  std::map<std::string, OpFn> ops_;
};

// Why LibTorch cannot run on a GPU here (the plugin does not load, or its LibTorch has no CUDA or
// sees no GPU); empty when it can.
std::string aten_cuda_unavailable() {
  try {
    return reinterpret_cast<AtenCudaUnavailableFn>(aten_plugin_symbol("parity_aten_cuda_unavailable"))();
  } catch (const Error& e) {
    return e.what();
  }
}

// The aten implementation of `op`, from the plugin, which is loaded on the first aten call.
OpFn aten_op(const std::string& op) {
  return [op](std::string_view line, const std::vector<Tensor>& inputs) {
    static const auto* ops = reinterpret_cast<AtenOpsFn>(aten_plugin_symbol("parity_aten_ops"))();
    const auto it = ops->find(op);
    if (it == ops->end()) throw Error("the aten plugin has no " + op);
    return it->second(line, inputs);
  };
}

OpFn aten_cuda_op(const std::string& op, int cudnn) {
  return [op, cudnn](std::string_view line, const std::vector<Tensor>& inputs) {
    const auto* ops = reinterpret_cast<AtenCudaOpsFn>(aten_plugin_symbol("parity_aten_cuda_ops"))(cudnn);
    const auto it = ops->find(op);
    if (it == ops->end()) throw Error("the aten plugin has no CUDA " + op);
    return it->second(line, inputs);
  };
}

std::map<std::string, std::unique_ptr<TableBackend>, std::less<>> make_backends() {
  std::map<std::string, std::unique_ptr<TableBackend>, std::less<>> b;
  b["ref"] = std::make_unique<TableBackend>("ref", [] { return std::string(); });
  b["aten"] = std::make_unique<TableBackend>("aten", [] { return std::string(); });
  b["cuda"] = std::make_unique<TableBackend>("cuda", [] {
    const GpuStatus& s = gpu_status();
    if (!s.built) return s.reason;
    return s.available ? std::string() : s.reason;
  });
  // LibTorch's CUDA kernels (aten_ops.cpp): with cuDNN, and without (ATen's own convolution).
  for (const auto& [name, cudnn] : {std::pair<const char*, int>{"aten:cuda", 1}, {"aten:cuda-nocudnn", 0}}) {
    b[name] = std::make_unique<TableBackend>(name, aten_cuda_unavailable);
    for (const OpTraits& t : op_table()) b[name]->add(t.name, aten_cuda_op(t.name, cudnn));
  }
  for (const OpTraits& t : op_table()) {
    if (t.ref) b["ref"]->add(t.name, t.ref);
    b["aten"]->add(t.name, aten_op(t.name));
    if (t.cuda) b["cuda"]->add(t.name, t.cuda);
  }
  return b;
}

const std::map<std::string, std::unique_ptr<TableBackend>, std::less<>>& backends() {
  static const auto b = make_backends();
  return b;
}

}  // namespace

const Backend& backend(std::string_view name) {
  const auto& b = backends();
  const auto it = b.find(name);
  if (it == b.end() && name.rfind("faulty:", 0) == 0) {
    // Made on first use and kept: its call counter must survive between ops of one run.
    static std::mutex mutex;
    static std::map<std::string, std::unique_ptr<Backend>, std::less<>> faulty;
    std::lock_guard<std::mutex> lock(mutex);
    auto f = faulty.find(name);
    if (f == faulty.end()) f = faulty.emplace(std::string(name), make_faulty_backend(std::string(name))).first;
    return *f->second;
  }
  if (it == b.end()) {
    std::string known;
    for (const std::string& n : backend_names()) known += (known.empty() ? "" : " ") + n;
    throw Error("unknown backend '" + std::string(name) + "' (known: " + known + ")");
  }
  return *it->second;
}

std::vector<std::string> backend_names() { return {"ref", "aten", "cuda", "aten:cuda", "aten:cuda-nocudnn", "faulty:<defect>[:<n>]"}; }

bool runs_on_gpu(std::string_view name) { return name == "cuda" || name.rfind("aten:cuda", 0) == 0; }

std::vector<std::string> op_names() {
  std::vector<std::string> names;
  for (const OpTraits& t : op_table()) names.push_back(t.name);
  return names;
}

bool is_known_op(std::string_view op) {
  for (const OpTraits& t : op_table()) {
    if (t.name == op) return true;
  }
  return false;
}

std::string op_name_of(std::string_view line) {
  std::istringstream in{std::string(line)};
  std::string op;
  in >> op;
  if (op.empty()) throw Error("empty op line");
  return op;
}

std::string canonical_line(std::string_view line) { return op_traits_of(line).canonical(line); }

std::vector<TensorSpec> op_inputs(std::string_view line) { return op_traits_of(line).inputs(line); }

}  // namespace parity
