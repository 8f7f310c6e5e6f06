// Reading the named tensors of a TorchScript archive (parameters, then buffers), for weights
// given as a .pt file. Built into the aten plugin, the one library that links LibTorch; the
// runners reach it through the plugin's table (kernels/aten/plugin.h, read_torchscript).
#include <torch/csrc/jit/serialization/import.h>

#include <cstring>

#include "core/error.h"
#include "kernels/aten/plugin.h"

namespace parity {

namespace {
Tensor copy_of(const at::Tensor& t) {
  const at::Tensor c = t.detach().to(at::kCPU).contiguous();
  DType dt;
  switch (c.scalar_type()) {
    case at::kFloat: dt = DType::Float32; break;
    case at::kDouble: dt = DType::Float64; break;
    case at::kHalf: dt = DType::Float16; break;
    case at::kLong: dt = DType::Int64; break;
    case at::kInt: dt = DType::Int32; break;
    case at::kByte: dt = DType::UInt8; break;
    case at::kBool: dt = DType::Bool; break;
    default: throw Error(std::string("unsupported parameter dtype ") + c10::toString(c.scalar_type()));
  }
  Tensor out(dt, Shape(c.sizes().vec()));
  if (out.nbytes()) std::memcpy(out.mutable_bytes(), c.data_ptr(), out.nbytes());
  return out;
}

std::map<std::string, Tensor> read_torchscript_tensors(const std::string& path) {
  torch::jit::Module m;
  try {
    m = torch::jit::load(path);
  } catch (const c10::Error& e) {
    const std::string msg = e.what_without_backtrace();
    throw Error("not a TorchScript archive: " + msg.substr(0, msg.find('\n'))).file(path);
  }
  std::map<std::string, Tensor> out;
  for (const auto& p : m.named_parameters(/*recurse=*/true)) out[p.name] = copy_of(p.value);
  for (const auto& b : m.named_buffers(/*recurse=*/true)) out.emplace(b.name, copy_of(b.value));
  return out;
}

}  // namespace
}  // namespace parity

std::map<std::string, parity::Tensor> parity::aten_read_torchscript(
    const std::string& path) {
  return parity::read_torchscript_tensors(path);
}
