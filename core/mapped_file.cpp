#include "core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>

#include "core/error.h"
#include "core/regular_file.h"

namespace parity {

namespace {

// The mappings alive, for the SIGBUS handler to name the file a fault lies in. Fixed slots and
// atomics only: the handler may read them at any moment, and takes no lock. A mapping that finds
// no free slot is simply not named.
struct MappingSlot {
  std::atomic<int> state{0};  // 0 free, 1 being written or cleared, 2 readable
  uintptr_t begin = 0, end = 0;
  char path[1024] = {};
};
MappingSlot mapping_slots[256];

MappingSlot* register_mapping(const std::string& path, const std::byte* data, size_t size) {
  for (MappingSlot& slot : mapping_slots) {
    int expected = 0;
    if (!slot.state.compare_exchange_strong(expected, 1)) continue;
    slot.begin = reinterpret_cast<uintptr_t>(data), slot.end = slot.begin + size;
    const size_t n = std::min(path.size(), sizeof slot.path - 1);
    std::memcpy(slot.path, path.data(), n);
    slot.path[n] = '\0';
    slot.state.store(2);
    return &slot;
  }
  return nullptr;
}

void unregister_mapping(MappingSlot* slot) {
  if (!slot) return;
  slot->state.store(1);
  slot->begin = slot->end = 0;
  slot->state.store(0);
}

}  // namespace

std::shared_ptr<const MappedFile> MappedFile::open(const std::string& path, bool populate) {
  const int fd = open_regular_file(path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw Error("cannot stat: " + errno_text(err)).file(path);
  }
  const size_t size = static_cast<size_t>(st.st_size);
  const std::byte* data = nullptr;
  if (size > 0) {  // mmap refuses a zero length; an empty file is simply an empty mapping
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | (populate ? MAP_POPULATE : 0), fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throw Error("cannot map: " + errno_text(err)).file(path);
    }
    data = static_cast<const std::byte*>(p);
  }
  ::close(fd);  // the mapping keeps the file alive
  auto file = std::shared_ptr<MappedFile>(new MappedFile(path, data, size));
  if (data) file->slot_ = register_mapping(path, data, size);
  return file;
}

namespace {
volatile std::sig_atomic_t truncated_mapping_exit_code = 3;
char truncated_mapping_prefix[64] = "parity: ";  // written before the handler is installed

void say(const char* text) { (void)!::write(STDERR_FILENO, text, std::strlen(text)); }

// Only async-signal-safe calls: write, strlen, _exit.
void on_sigbus(int, siginfo_t* info, void*) {
  const auto at = reinterpret_cast<uintptr_t>(info->si_addr);
  const char* path = nullptr;
  for (const MappingSlot& slot : mapping_slots) {
    if (slot.state.load() == 2 && slot.begin <= at && at < slot.end) path = slot.path;
  }
  say(truncated_mapping_prefix);
  if (path) say(path), say(": ");
  say("file shrank while it was read (mapped; truncated by another process?)\n");
  ::_exit(truncated_mapping_exit_code);
}
}  // namespace

void exit_on_truncated_mapping(int code, const std::string& prefix) {
  truncated_mapping_exit_code = code;
  const size_t n = std::min(prefix.size(), sizeof truncated_mapping_prefix - 1);
  std::memcpy(truncated_mapping_prefix, prefix.data(), n);
  truncated_mapping_prefix[n] = '\0';
  struct sigaction action {};
  action.sa_sigaction = on_sigbus;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGBUS, &action, nullptr);
}

const std::byte* release_read_pages(const std::byte* from, const std::byte* to) {
  constexpr uintptr_t kBlock = uintptr_t(2) << 20;
  const uintptr_t lo = (reinterpret_cast<uintptr_t>(from) + kBlock - 1) & ~(kBlock - 1);
  const uintptr_t hi = reinterpret_cast<uintptr_t>(to) & ~(kBlock - 1);
  if (hi <= lo) return from;
  // Failing only for a range that is not a mapping, which the caller's reads would have shown:
  // the pages then simply stay, as they would without this call.
  (void)::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
  return reinterpret_cast<const std::byte*>(hi);
}

MappedFile::~MappedFile() {
  unregister_mapping(static_cast<MappingSlot*>(slot_));
  if (data_) ::munmap(const_cast<std::byte*>(data_), size_);
}

}  // namespace parity
