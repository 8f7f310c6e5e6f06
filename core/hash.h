#pragma once
// Content hashes of tensors, as dumps record them and as readers recompute them from the bytes
// they read: "xxh3:<16 hex digits>", XXH3 64-bit (seed 0) over the data bytes; dtype and shape
// are not hashed, they are checked on their own. XXH3 runs at memory speed (the x86 dispatch
// picks AVX-512 or AVX2), so verifying every byte costs less than reading it. Dumps written
// before it record "xxh64:" (XXH64, seed 0), which readers still verify.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace parity {

std::string content_hash(const Tensor& t);

// Whether `h` has the form of a hash this file computes (either algorithm).
bool is_content_hash(const std::string& h);
// The hash of `t` by the algorithm `recorded` names, to check a recorded hash against the bytes.
std::string content_hash_like(const std::string& recorded, const Tensor& t);

// content_hash of bytes given piece by piece, in order.
class ContentHasher {
 public:
  ContentHasher();
  ~ContentHasher();
  ContentHasher(const ContentHasher&) = delete;
  ContentHasher& operator=(const ContentHasher&) = delete;
  void update(const void* data, size_t size);
  std::string digest() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// One hash for an ordered set of tensors (a model's weights): each tensor's bytes are hashed
// with the previous tensor's hash as the seed, so content and order both count.
std::string chained_content_hash(const std::vector<const Tensor*>& tensors);

}  // namespace parity
