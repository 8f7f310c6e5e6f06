#include <torch/csrc/jit/api/module.h>

#include <ATen/ops/from_blob.h>

#include "torchscript_writer.h"

namespace parity::test {

void write_torchscript(const std::string& path, const std::map<std::string, Tensor>& tensors) {
  torch::jit::Module root("parity_test");
  for (const auto& [key, t] : tensors) {
    // Walk or create the submodule path, then register the last part as a parameter.
    std::vector<std::string> parts;
    for (size_t start = 0, dot; start <= key.size(); start = dot + 1) {
      dot = key.find('.', start);
      if (dot == std::string::npos) dot = key.size();
      parts.push_back(key.substr(start, dot - start));
    }
    torch::jit::Module m = root;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      if (!m.hasattr(parts[i])) m.register_module(parts[i], torch::jit::Module("m_" + parts[i]));
      m = m.attr(parts[i]).toModule();
    }
    const at::Tensor value = at::from_blob(const_cast<std::byte*>(t.bytes()), t.shape().dims(), at::kFloat).clone();
    m.register_parameter(parts.back(), value, /*is_buffer=*/false);
  }
  root.save(path);
}

}  // namespace parity::test
