#include "core/hash.h"

#include <xxh_x86dispatch.h>
#include <xxhash.h>

#include <cstdint>
#include <cstdio>

namespace parity {

namespace {
constexpr const char* kXxh3 = "xxh3:";
constexpr const char* kXxh64 = "xxh64:";

std::string as_text(const char* prefix, uint64_t h) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%016llx", prefix, static_cast<unsigned long long>(h));
  return buf;
}

bool has_prefix(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }
}  // namespace

std::string content_hash(const Tensor& t) { return as_text(kXxh3, XXH3_64bits_dispatch(t.bytes(), t.nbytes())); }

bool is_content_hash(const std::string& h) {
  for (const std::string prefix : {kXxh3, kXxh64}) {
    if (h.size() == prefix.size() + 16 && has_prefix(h, prefix) &&
        h.find_first_not_of("0123456789abcdef", prefix.size()) == std::string::npos) {
      return true;
    }
  }
  return false;
}

std::string content_hash_like(const std::string& recorded, const Tensor& t) {
  if (has_prefix(recorded, kXxh64)) return as_text(kXxh64, XXH64(t.bytes(), t.nbytes(), 0));
  return content_hash(t);
}

struct ContentHasher::State {
  XXH3_state_t* xxh = XXH3_createState();
  ~State() { XXH3_freeState(xxh); }
};

ContentHasher::ContentHasher() : state_(std::make_unique<State>()) { XXH3_64bits_reset(state_->xxh); }
ContentHasher::~ContentHasher() = default;
void ContentHasher::update(const void* data, size_t size) { XXH3_64bits_update_dispatch(state_->xxh, data, size); }
std::string ContentHasher::digest() const { return as_text(kXxh3, XXH3_64bits_digest(state_->xxh)); }

std::string chained_content_hash(const std::vector<const Tensor*>& tensors) {
  uint64_t h = 0;
  for (const Tensor* t : tensors) h = XXH64(t->bytes(), t->nbytes(), h);
  return as_text(kXxh64, h);
}

}  // namespace parity
