#include "kernels/aten_util.h"

#include <ATen/Parallel.h>
#include <ATen/ops/from_blob.h>

#include <cstring>
#include <mutex>

#include "core/error.h"
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

at::Tensor to_aten(const Tensor& t) {
  return at::from_blob(const_cast<std::byte*>(t.bytes()), t.shape().dims(),
                       at::TensorOptions().dtype(scalar_type(t.dtype())));
}

Tensor from_aten(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
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

}  // namespace parity
