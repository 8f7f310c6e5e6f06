#pragma once
// Conversions between parity tensors and LibTorch's, for the `_aten.cpp` files only (the one
// place Torch headers appear).
#include <ATen/core/Tensor.h>

#include "core/tensor.h"

namespace parity {

// A zero-copy CPU at::Tensor over t's bytes. ATen ops read it and never write it.
at::Tensor to_aten(const Tensor& t);
// A contiguous copy of an at::Tensor as an owning parity tensor (int64 indices stay int64).
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
