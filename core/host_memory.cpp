#include "core/host_memory.h"

#include <sys/mman.h>

#include <algorithm>
#include <fstream>
#include <mutex>
#include <new>
#include <string>
#include <vector>

namespace parity {

namespace {

constexpr std::align_val_t kSmallAlignment{64};  // a cache line: enough for any SIMD load
constexpr std::align_val_t kHugeAlignment{kHugeBuffer};

struct Kept {
  std::byte* data;
  size_t capacity;
};

class Keeper {
 public:
  // The smallest kept buffer that holds `capacity` bytes, at most twice that (a large buffer is
  // not tied up by a small tensor); data null when none fits.
  Kept take(size_t capacity) {
    const std::lock_guard<std::mutex> lock(mutex_);
    auto best = kept_.end();
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if (it->capacity >= capacity && it->capacity / 2 <= capacity && (best == kept_.end() || it->capacity < best->capacity)) best = it;
    }
    if (best == kept_.end()) return {nullptr, 0};
    const Kept k = *best;
    bytes_ -= k.capacity;
    kept_.erase(best);
    return k;
  }

  // Keeps the buffer if there is room; returns false when the caller must free it.
  bool keep(std::byte* p, size_t capacity) {
#ifdef __SANITIZE_ADDRESS__
    // Under AddressSanitizer every buffer is freed, so that a use after free is still caught.
    (void)p, (void)capacity;
    return false;
#endif
    const std::lock_guard<std::mutex> lock(mutex_);
    if (bytes_ + capacity > kKeptBytes) return false;
    kept_.push_back({p, capacity});
    bytes_ += capacity;
    return true;
  }

  size_t bytes() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return bytes_;
  }

 private:
  std::mutex mutex_;
  std::vector<Kept> kept_;
  size_t bytes_ = 0;
};

// Never destroyed: tensors held by static objects may be freed after main returns.
Keeper& keeper() {
  static Keeper* k = new Keeper;
  return *k;
}

std::shared_ptr<std::byte> huge_buffer(size_t nbytes) {
  const size_t capacity = (nbytes + kHugeBuffer - 1) / kHugeBuffer * kHugeBuffer;
  Kept b = keeper().take(capacity);
  if (!b.data) {
    b.capacity = capacity;
    b.data = static_cast<std::byte*>(::operator new(b.capacity, kHugeAlignment));
    // Advice only: where transparent huge pages are off, the buffer works with 4 KiB pages.
    (void)::madvise(b.data, b.capacity, MADV_HUGEPAGE);
  }
  return std::shared_ptr<std::byte>(b.data, [capacity = b.capacity](std::byte* q) {
    if (!keeper().keep(q, capacity)) ::operator delete(q, kHugeAlignment);
  });
}

}  // namespace

std::shared_ptr<std::byte> host_buffer(size_t nbytes) {
  if (nbytes >= kHugeBuffer) return huge_buffer(nbytes);
  auto* p = static_cast<std::byte*>(::operator new(std::max<size_t>(nbytes, 1), kSmallAlignment));
  return std::shared_ptr<std::byte>(p, [](std::byte* q) { ::operator delete(q, kSmallAlignment); });
}

size_t kept_host_bytes() { return keeper().bytes(); }

bool huge_pages_on_request() {
  static const bool on = [] {
    std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string modes;
    std::getline(f, modes);
    return modes.find("[always]") != std::string::npos || modes.find("[madvise]") != std::string::npos;
  }();
  return on;
}

}  // namespace parity
