#include "core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>

#include "core/error.h"

namespace parity {

std::shared_ptr<const MappedFile> MappedFile::open(const std::string& path, bool populate) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot open: " + errno_text(errno)).file(path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw Error("cannot stat: " + errno_text(err)).file(path);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error("not a regular file").file(path);
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
  return std::shared_ptr<const MappedFile>(new MappedFile(path, data, size));
}

namespace {
volatile std::sig_atomic_t truncated_mapping_exit_code = 3;

void on_sigbus(int) {
  static const char message[] =
      "parity: a file being read changed size while it was mapped (truncated by another process?): stopped\n";
  (void)!::write(STDERR_FILENO, message, sizeof message - 1);  // async-signal-safe, as is _exit
  ::_exit(truncated_mapping_exit_code);
}
}  // namespace

void exit_on_truncated_mapping(int code) {
  truncated_mapping_exit_code = code;
  struct sigaction action {};
  action.sa_handler = on_sigbus;
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
  if (data_) ::munmap(const_cast<std::byte*>(data_), size_);
}

}  // namespace parity
