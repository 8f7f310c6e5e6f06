#include "kernels/aten_util.h"

#include <ATen/Parallel.h>
#include <ATen/ops/from_blob.h>

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
}  // namespace

at::Device aten_device() { return current_device; }

AtenDeviceScope::AtenDeviceScope(at::Device d) : saved_(current_device) { current_device = d; }
AtenDeviceScope::~AtenDeviceScope() { current_device = saved_; }

at::Tensor to_aten(const Tensor& t) {
  const at::Tensor host = at::from_blob(const_cast<std::byte*>(t.bytes()), t.shape().dims(),
                                        at::TensorOptions().dtype(scalar_type(t.dtype())));
  if (current_device.is_cpu()) return host;
  at::Tensor device = host.to(current_device);
  gpu_span_begin();  // bench's device time starts after the last input upload
  return device;
}

Tensor from_aten(const at::Tensor& t) {
  if (!t.is_cpu()) gpu_span_end();  // ...and ends before the first output download
  // bfloat16 is not a dump dtype: dumps hold it widened to float32 (exactly), and so does this.
  const at::Tensor c = (t.scalar_type() == at::kBFloat16 ? t.to(at::kFloat) : t).to(at::kCPU).contiguous();
  Tensor out(dtype_from(c.scalar_type()), Shape(c.sizes().vec()));
  if (out.nbytes()) std::memcpy(out.mutable_bytes(), c.data_ptr(), out.nbytes());
  return out;
}

void throw_aten_error(const char* op, const std::string& message) {
  throw Error(std::string(op) + ": LibTorch: " + message.substr(0, message.find('\n')));
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
