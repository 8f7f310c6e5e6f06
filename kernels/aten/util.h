#pragma once
// Conversions between parity tensors and LibTorch's, for the `_aten.cpp` files only (the one
// place Torch headers appear).
#include <ATen/core/Tensor.h>

#include <map>
#include <string>

#include "core/scoped_setting.h"
#include "core/tensor.h"
#include "kernels/backend.h"

namespace parity {

// Where the _aten.cpp ops run on this thread: the CPU (the `aten` backend) or the GPU (the
// `aten:cuda*` backends, which set it around each call with AtenDeviceScope).
at::Device aten_device();
class AtenDeviceScope : ScopedSetting<at::Device> {
 public:
  explicit AtenDeviceScope(at::Device d);
};

// On the CPU: a zero-copy at::Tensor over t's bytes, which ATen ops read and never write. On the
// GPU: a device copy of them. Inside a half call's HalfScope (kernels/call.h: the aten ops run in
// in_call_precision), float32 tensors are handed over in that type, so LibTorch runs its own half
// kernels; from_aten widens their results back to float32.
at::Tensor to_aten(const Tensor& t);
// A contiguous host copy of an at::Tensor (on any device) as an owning parity tensor (int64
// indices stay int64).
Tensor from_aten(const at::Tensor& t);
// LibTorch's intra-op threads follow parity's (it defaults to 1 here); called before each op.
void aten_threads();

// The float type the judge runs a recorded call in on this thread (torch_dispatch.cpp, the
// arithmetic of torch_calls.cpp): float64, or another inside a JudgeComputeScope
// (aten_torch_call_computed_in).
at::ScalarType judge_float_type();
class JudgeComputeScope : ScopedSetting<at::ScalarType> {
 public:
  explicit JudgeComputeScope(at::ScalarType t);
};

// float32 golden data computed in float64: an input widened exactly, the result rounded once.
inline at::Tensor to_aten_float64(const Tensor& t) { return to_aten(t).to(at::kDouble); }
inline Tensor from_aten_float32(const at::Tensor& t) { return from_aten(t.to(at::kFloat)); }

[[noreturn]] void throw_aten_error(const char* op, const std::string& message);

// Runs a LibTorch call, turning its c10::Error (an out-of-range index, say) into parity::Error
// with the op's name and the first line of LibTorch's message.
// torchvision's C++ library ($PARITY_TORCHVISION_LIB, a path or "none", else the one CMake found),
// loaded once for the operators it registers with the dispatcher (torchvision::nms, roi_align).
struct TorchvisionLibrary {
  std::string path;
  bool loaded = false;
  std::string why_not;  // when not loaded
};
const TorchvisionLibrary& torchvision_library();

template <typename F> auto aten_call(const char* op, F&& f) {
  aten_threads();
  try {
    return f();
  } catch (const c10::Error& e) {
    throw_aten_error(op, e.what_without_backtrace());
  }
}

// ---- What each _aten.cpp gives the plugin ----
// Each op's _aten.cpp registers its own entries, keyed by its params' kName, when the plugin
// loads, so that aten/ops.cpp names no op:
//   PARITY_ATEN_OP(SiluParams, unary_op(silu_aten));  // the aten backends' silu
//   PARITY_ATEN_FLOAT64(SiluParams, silu_float64);     // golden data in float64 (parity_aten_float64)
//   PARITY_ATEN_NOTE(NmsParams, nms_aten_kind);        // what replay says about it (Backend::note)
// The tables are function-local statics, so the order in which the files initialise does not
// matter; dlopen runs every registration before the loader can call an entry point.
enum class AtenTable { Op, Float64 };
// The op's OpFn, or its float64 variant (the OpFn's outputs: float32, or none where float64
// changes the semantics or adds nothing).
const std::map<std::string, OpFn>& aten_table(AtenTable table);
// The op's note; empty when it has none.
std::string aten_note(const std::string& op);

struct AtenRegistrar {
  AtenRegistrar(AtenTable table, const char* op, OpFn fn);
  AtenRegistrar(const char* op, std::string (*note)());
};

#define PARITY_ATEN_CONCAT_(a, b) a##b
#define PARITY_ATEN_CONCAT(a, b) PARITY_ATEN_CONCAT_(a, b)
#define PARITY_ATEN_OP(Params, fn) \
  static const ::parity::AtenRegistrar PARITY_ATEN_CONCAT(parity_aten_op_, __LINE__)(::parity::AtenTable::Op, Params::kName, fn)
#define PARITY_ATEN_FLOAT64(Params, fn)                                                            \
  static const ::parity::AtenRegistrar PARITY_ATEN_CONCAT(parity_aten_float64_, __LINE__)(::parity::AtenTable::Float64, \
                                                                                          Params::kName, fn)
#define PARITY_ATEN_NOTE(Params, fn) \
  static const ::parity::AtenRegistrar PARITY_ATEN_CONCAT(parity_aten_note_, __LINE__)(Params::kName, fn)

}  // namespace parity
