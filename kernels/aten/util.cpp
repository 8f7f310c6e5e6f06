#include "kernels/aten/util.h"

#include <ATen/Parallel.h>
#include <ATen/ops/from_blob.h>

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "core/error.h"
#include "core/gpu.h"
#include "core/thread_pool.h"

namespace parity {

namespace {
at::ScalarType scalar_type(DType dt) {
  switch (dt) {
    case DType::Float16: return at::kHalf;
    case DType::Float32: return at::kFloat;
    case DType::Float64: return at::kDouble;
    case DType::Int32: return at::kInt;
    case DType::Int64: return at::kLong;
    case DType::UInt8: return at::kByte;
    case DType::Bool: return at::kBool;
  }
  throw Error("unknown dtype");
}

DType dtype_from(at::ScalarType st) {
  for (DType dt : kAllDTypes) {
    if (scalar_type(dt) == st) return dt;
  }
  throw Error(std::string("LibTorch returned an unsupported dtype ") + c10::toString(st));
}
}  // namespace

namespace {
thread_local at::Device current_device(at::kCPU);
thread_local at::ScalarType judge_type = at::kDouble;
}  // namespace

at::Device aten_device() { return current_device; }

AtenDeviceScope::AtenDeviceScope(at::Device d) : ScopedSetting(current_device, d) {}

at::ScalarType judge_float_type() { return judge_type; }
JudgeComputeScope::JudgeComputeScope(at::ScalarType t) : ScopedSetting(judge_type, t) {}


at::Tensor to_aten(const Tensor& t) {
  at::Tensor host = at::from_blob(const_cast<std::byte*>(t.bytes()), t.shape().dims(),
                                  at::TensorOptions().dtype(scalar_type(t.dtype())));
  // A half call's float32 values are exactly its type's: the conversion is exact.
  if (t.dtype() == DType::Float32 && half_in_scope() != HalfType::None) host = host.to(half_in_scope() == HalfType::Fp16 ? at::kHalf : at::kBFloat16);
  if (current_device.is_cpu()) return host;
  at::Tensor device = host.to(current_device);
  gpu_span_begin();  // bench's device time starts after the last input upload
  return device;
}

Tensor from_aten(const at::Tensor& t) {
  if (!t.is_cpu()) gpu_span_end();  // ...and ends before the first output download
  // bfloat16 is not a dump dtype: dumps hold it widened to float32 (exactly), and so does this.
  // So are float16 results of a half call, which parity carries as float32 (kernels/call.h).
  const bool widen = t.scalar_type() == at::kBFloat16 || (t.scalar_type() == at::kHalf && half_in_scope() != HalfType::None);
  const at::Tensor c = (widen ? t.to(at::kFloat) : t).to(at::kCPU).contiguous();
  Tensor out = Tensor::uninitialized(dtype_from(c.scalar_type()), Shape(c.sizes().vec()));  // every byte copied below
  if (out.nbytes()) std::memcpy(out.mutable_bytes(), c.data_ptr(), out.nbytes());
  return out;
}

void throw_aten_error(const char* op, const std::string& message) {
  const std::string line = std::string(op) + ": LibTorch: " + message.substr(0, message.find('\n'));
  // "\"nms_kernel\" not implemented for 'BFloat16'": this LibTorch has no kernel for the type.
  if (message.find("not implemented for '") != std::string::npos) throw Unsupported(line);
  throw Error(line);
}

namespace {

// Loads `path` for its symbols (RTLD_GLOBAL); "" when it loaded, else the loader's error.
std::string load_global(const std::string& path) {
  if (::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL)) return "";
  const char* e = ::dlerror();
  return e ? e : "unknown dlopen error";
}

// A pip torchvision's library links libtorch_python.so, which sits beside libtorch_cpu but on no
// search path of the loader, and which leaves Python's C API to the process: a program with no
// Python in it must load libpython first ($PARITY_PYTHON_LIB, else the one CMake was given).
// Returns "" when torchvision's library then loads, else what stopped it.
std::string load_with_python(const std::string& path) {
  const char* env = std::getenv("PARITY_PYTHON_LIB");
  const std::string python = env && *env ? env : PARITY_PYTHON_LIB;
  if (python.empty()) return "it needs libtorch_python, and no libpython was named (PARITY_PYTHON_LIB)";
  if (std::string e = load_global(python); !e.empty()) return "cannot load libpython: " + e;
  // Found from a function defined in libtorch_cpu (an inline one would name this plugin).
  Dl_info info{};
  if (!::dladdr(reinterpret_cast<void*>(&at::set_num_threads), &info) || !info.dli_fname) return "cannot locate libtorch_cpu";
  const std::string lib = info.dli_fname, dir = lib.substr(0, lib.rfind('/') + 1);
  if (std::string e = load_global(dir + "libtorch_python.so"); !e.empty()) return e;
  return load_global(path);
}

}  // namespace

const TorchvisionLibrary& torchvision_library() {
  static const TorchvisionLibrary lib = [] {
    TorchvisionLibrary l;
    const char* env = std::getenv("PARITY_TORCHVISION_LIB");
    l.path = env && *env ? env : PARITY_TORCHVISION_LIB;
    if (l.path.empty() || l.path == "none") {
      l.why_not = l.path.empty() ? "no torchvision library was found at configure time" : "PARITY_TORCHVISION_LIB=none";
      return l;
    }
    // Loading registers torchvision's operators with LibTorch's dispatcher; it stays loaded.
    std::string error = load_global(l.path);
    if (error.find("libtorch_python") != std::string::npos) error = load_with_python(l.path);
    l.loaded = error.empty();
    if (!l.loaded) l.why_not = "cannot load " + l.path + ": " + error;
    return l;
  }();
  return lib;
}

void aten_threads() {
  static std::once_flag once;
  std::call_once(once, [] { at::set_num_threads(num_threads()); });
}

namespace {
struct AtenTables {
  std::map<std::string, OpFn> ops, float64;
  std::map<std::string, std::string (*)()> notes;
};
AtenTables& tables() {
  static AtenTables t;
  return t;
}
}  // namespace

const std::map<std::string, OpFn>& aten_table(AtenTable table) {
  return table == AtenTable::Op ? tables().ops : tables().float64;
}

std::string aten_note(const std::string& op) {
  const auto it = tables().notes.find(op);
  return it == tables().notes.end() ? std::string() : it->second();
}

// Registrations run one at a time, while dlopen initialises the plugin: no lock needed.
AtenRegistrar::AtenRegistrar(AtenTable table, const char* op, OpFn fn) {
  (table == AtenTable::Op ? tables().ops : tables().float64)[op] = std::move(fn);
}

AtenRegistrar::AtenRegistrar(const char* op, std::string (*note)()) { tables().notes[op] = note; }

}  // namespace parity
