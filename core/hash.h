#pragma once
// Content hashes of tensors, as dumps record them and as readers recompute them from the bytes
// they read ("xxh64:<16 hex digits>", XXH64 with seed 0 over the data bytes; dtype and shape
// are not hashed, they are checked on their own).
#include <string>
#include <vector>

#include "core/tensor.h"

namespace parity {

std::string content_hash(const Tensor& t);

// One hash for an ordered set of tensors (a model's weights): each tensor's bytes are hashed
// with the previous tensor's hash as the seed, so content and order both count.
std::string chained_content_hash(const std::vector<const Tensor*>& tensors);

}  // namespace parity
