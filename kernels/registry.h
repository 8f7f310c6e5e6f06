#pragma once
// The op table behind backend(): one entry per op with its line parser and the implementation
// of each backend (empty where a backend has none). Internal to kernels/.
#include <string>
#include <vector>

#include "kernels/backend.h"

namespace parity {

struct OpEntry {
  std::string name;
  std::function<std::string(std::string_view)> canonical;
  std::function<std::vector<TensorSpec>(std::string_view)> inputs;
  OpFn ref, aten, cuda;
};

// Builds an entry's line functions from its params type.
template <typename P> OpEntry op_entry_for(OpFn ref, OpFn aten, OpFn cuda = nullptr) {
  return {P::kName, [](std::string_view l) { return P::parse(l).str(); },
          [](std::string_view l) { return P::parse(l).inputs(); }, std::move(ref), std::move(aten), std::move(cuda)};
}

const std::vector<OpEntry>& op_table();
const OpEntry& op_entry(std::string_view op);  // throws for an unknown op

}  // namespace parity
