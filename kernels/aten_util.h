#pragma once
// Conversions between parity tensors and LibTorch's, for the `_aten.cpp` files only (the one
// place Torch headers appear).
#include <ATen/core/Tensor.h>

#include "core/tensor.h"

namespace parity {

// Where the _aten.cpp ops run on this thread: the CPU (the `aten` backend) or the GPU (the
// `aten:cuda*` backends, which set it around each call with AtenDeviceScope).
at::Device aten_device();
class AtenDeviceScope {
 public:
  explicit AtenDeviceScope(at::Device d);
  ~AtenDeviceScope();
  AtenDeviceScope(const AtenDeviceScope&) = delete;
  AtenDeviceScope& operator=(const AtenDeviceScope&) = delete;

 private:
  at::Device saved_;
};

// On the CPU: a zero-copy at::Tensor over t's bytes, which ATen ops read and never write. On the
// GPU: a device copy of them.
at::Tensor to_aten(const Tensor& t);
// A contiguous host copy of an at::Tensor (on any device) as an owning parity tensor (int64
// indices stay int64).
Tensor from_aten(const at::Tensor& t);
// LibTorch's intra-op threads follow parity's (it defaults to 1 here); called before each op.
void aten_threads();

[[noreturn]] void throw_aten_error(const char* op, const std::string& message);

// Runs a LibTorch call, turning its c10::Error (an out-of-range index, say) into parity::Error
// with the op's name and the first line of LibTorch's message.
template <typename F> auto aten_call(const char* op, F&& f) {
  aten_threads();
  try {
    return f();
  } catch (const c10::Error& e) {
    throw_aten_error(op, e.what_without_backtrace());
  }
}

}  // namespace parity
