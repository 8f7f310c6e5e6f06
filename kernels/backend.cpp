#include "kernels/backend.h"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>

#include "core/error.h"
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

OpTableBackend::OpTableBackend(std::string name, std::function<std::string()> reason)
    : name_(std::move(name)), reason_(std::move(reason)) {}

void OpTableBackend::add(const std::string& op, OpFn fn) { ops_[op] = std::move(fn); }

std::string OpTableBackend::unavailable_reason() const { return reason_ ? reason_() : std::string(); }

bool OpTableBackend::supports(std::string_view op) const { return ops_.find(op) != ops_.end(); }

std::vector<Tensor> OpTableBackend::run(const Call& call, const std::vector<Tensor>& inputs) const {
  if (const std::string why = unavailable_reason(); !why.empty()) {
    throw Error("backend " + name_ + " cannot run here: " + why);
  }
  const auto it = ops_.find(call.op());
  if (it == ops_.end()) throw Error("backend " + name_ + " has no " + call.op() + " implementation");
  std::vector<Tensor> out = it->second(call, inputs);
  round_floats(out, call.half());
  return out;
}

Tensor rounded_to(const Tensor& t, HalfType h) {
  if (h == HalfType::None || t.dtype() != DType::Float32) return t;
  Tensor r = t.clone();  // outputs may be views of a mapping or of an input: never written through
  float* v = r.mutable_data<float>();
  for (int64_t i = 0; i < r.numel(); ++i) v[i] = round_to(v[i], h);
  return r;
}

void round_floats(std::vector<Tensor>& tensors, HalfType h) {
  for (Tensor& t : tensors) t = rounded_to(t, h);
}

std::vector<Tensor> run_in_type(const Backend& b, const Call& call, const std::vector<Tensor>& inputs, std::string* why_float32) {
  if (why_float32) why_float32->clear();
  try {
    return b.run(call, inputs);
  } catch (const Unsupported& e) {
    if (call.half() == HalfType::None) throw;
    if (why_float32) *why_float32 = e.what();
    std::vector<Tensor> out = b.run(Call(with_half(call.line(), HalfType::None)), inputs);
    round_floats(out, call.half());
    return out;
  }
}

namespace {

struct Registration {
  std::string name;  // a family's prefix
  bool family = false;
  std::string usage;
  int rank = 0;
  Runs runs = Runs::OnCpu;
  BackendFactory make;
};

struct Registry {
  // Recursive: a factory may ask for another backend (a wrapper of ref, say) while one is made.
  std::recursive_mutex mutex;
  std::vector<Registration> registrations;  // in registration order
  std::map<std::string, std::unique_ptr<Backend>, std::less<>> made;
  std::set<void*> plugins;  // dlopen handles whose entry point has run
};

// Never destroyed: a backend may still be asked for by a thread, or an exit handler, while the
// process ends, and a plugin's backends must not outlive its code.
Registry& registry() {
  static Registry* const r = new Registry;
  return *r;
}

// The registration `name` belongs to: its own, else the family with the longest matching prefix;
// null when none. The caller holds the mutex.
const Registration* find_registration(const Registry& r, std::string_view name) {
  const Registration* best = nullptr;
  for (const Registration& g : r.registrations) {
    if (!g.family && g.name == name) return &g;
    if (g.family && name.substr(0, g.name.size()) == g.name && (!best || g.name.size() > best->name.size())) best = &g;
  }
  return best;
}

void add_registration(Registration g) {
  Registry& r = registry();
  std::lock_guard<std::recursive_mutex> lock(r.mutex);
  for (const Registration& other : r.registrations) {
    if (other.family == g.family && other.name == g.name) {
      throw Error(std::string(g.family ? "backend family " : "backend ") + g.name + " is already registered");
    }
  }
  r.registrations.push_back(std::move(g));
}

}  // namespace

void register_backend(const std::string& name, BackendFactory make, int rank, Runs runs) {
  if (name.empty() || !make) throw Error("register_backend: a backend needs a name and a factory");
  add_registration({name, false, name, rank, runs, std::move(make)});
}

void register_backend_family(const std::string& prefix, const std::string& usage, BackendFactory make, int rank, Runs runs) {
  if (prefix.empty() || !make) throw Error("register_backend_family: a family needs a prefix and a factory");
  add_registration({prefix, true, usage.empty() ? prefix + "*" : usage, rank, runs, std::move(make)});
}

const Backend& backend(std::string_view name) {
  Registry& r = registry();
  std::lock_guard<std::recursive_mutex> lock(r.mutex);
  if (const auto it = r.made.find(name); it != r.made.end()) return *it->second;
  const Registration* g = find_registration(r, name);
  if (!g) {
    std::string known;
    for (const std::string& n : backend_names()) known += (known.empty() ? "" : " ") + n;
    throw Error("unknown backend '" + std::string(name) + "' (known: " + known + ")");
  }
  // Copied: the factory may register more backends, which moves the registrations.
  const BackendFactory make = g->make;
  std::unique_ptr<Backend> b = make(std::string(name));
  if (!b) throw Error("backend " + std::string(name) + ": its factory made nothing");
  return *r.made.emplace(std::string(name), std::move(b)).first->second;
}

std::vector<std::string> backend_names() {
  Registry& r = registry();
  std::lock_guard<std::recursive_mutex> lock(r.mutex);
  std::vector<const Registration*> order;
  for (const Registration& g : r.registrations) order.push_back(&g);
  std::stable_sort(order.begin(), order.end(), [](const Registration* a, const Registration* b) { return a->rank < b->rank; });
  std::vector<std::string> names;
  for (const Registration* g : order) names.push_back(g->usage);
  return names;
}

bool runs_on_gpu(std::string_view name) {
  Registry& r = registry();
  std::lock_guard<std::recursive_mutex> lock(r.mutex);
  const Registration* g = find_registration(r, name);
  return g && g->runs == Runs::OnGpu;
}

void load_backend_plugin(const std::string& path) {
  const std::string what = "backend plugin " + path + ": ";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw Error(what + (std::filesystem::exists(path, ec) ? "not a file" : "no such file"));
  }
  // dlopen searches the library path for a name without a slash; the flag names a file.
  const std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  // RTLD_LOCAL: two plugins may define the same helper names without one taking the other's.
  void* handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    std::string why = ::dlerror();
    why = why.substr(0, why.find('\n'));
    if (why.rfind(file + ": ", 0) == 0) why = why.substr(file.size() + 2);  // the file is named already
    throw Error(what + "cannot load it: " + why);
  }
  Registry& r = registry();
  std::lock_guard<std::recursive_mutex> lock(r.mutex);
  if (r.plugins.count(handle)) return;  // the same file again (dlopen counted one more reference)
  const auto entry = reinterpret_cast<RegisterBackendsFn>(::dlsym(handle, kRegisterBackendsSymbol));
  if (!entry) {
    ::dlclose(handle);
    throw Error(what + "not a backend plugin: it exports no " + kRegisterBackendsSymbol + " (see kernels/backend.h)");
  }
  r.plugins.insert(handle);  // kept loaded for the process: its backends' code lives there
  try {
    entry();
  } catch (const std::exception& e) {
    throw Error(what + e.what());
  }
}

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

std::string canonical_line(std::string_view line) { return Call(line).line(); }

std::vector<TensorSpec> op_inputs(std::string_view line) { return Call(line).inputs(); }

}  // namespace parity
