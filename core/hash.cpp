#include "core/hash.h"

#include <xxhash.h>

#include <cstdint>
#include <cstdio>

namespace parity {

namespace {
std::string as_text(uint64_t h) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "xxh64:%016llx", static_cast<unsigned long long>(h));
  return buf;
}
}  // namespace

std::string content_hash(const Tensor& t) { return as_text(XXH64(t.bytes(), t.nbytes(), 0)); }

std::string chained_content_hash(const std::vector<const Tensor*>& tensors) {
  uint64_t h = 0;
  for (const Tensor* t : tensors) h = XXH64(t->bytes(), t->nbytes(), h);
  return as_text(h);
}

}  // namespace parity
