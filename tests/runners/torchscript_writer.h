#pragma once
// Test helper: saves tensors by state_dict key as a TorchScript archive through LibTorch, as a
// scripted YOLOv5 would hold them (nested modules model -> 0 -> conv -> weight).
#include <map>
#include <string>

#include "core/tensor.h"

namespace parity::test {

void write_torchscript(const std::string& path, const std::map<std::string, Tensor>& tensors);

}  // namespace parity::test
