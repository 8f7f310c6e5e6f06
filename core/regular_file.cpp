#include "core/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "core/error.h"

namespace parity {

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

int open_regular_file(const std::string& path) {
  // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one; it
  // changes nothing for a regular file's reads.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw Error("cannot open: " + errno_text(errno)).file(path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw Error("cannot stat: " + errno_text(err)).file(path);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(std::string("is ") + kind_of(st.st_mode) + ", not a regular file").file(path);
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

std::string read_regular_file(const std::string& path, size_t max_bytes) {
  const int fd = open_regular_file(path);
  std::string text;
  try {
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw Error("cannot stat: " + errno_text(errno)).file(path);
    if (size_t(st.st_size) > max_bytes) {
      throw Error("is " + std::to_string(st.st_size) + " bytes, more than the " + std::to_string(max_bytes) + " parity reads of it").file(path);
    }
    text.resize(size_t(st.st_size));
    size_t at = 0;
    while (at < text.size()) {
      const ssize_t n = ::read(fd, text.data() + at, text.size() - at);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw Error("cannot read: " + errno_text(errno)).file(path);
      if (n == 0) break;  // shrank since fstat: what is there is what it holds
      at += size_t(n);
    }
    text.resize(at);
    // Grown since fstat: one more byte says so, and the limit still holds.
    char extra;
    if (at == size_t(st.st_size) && ::read(fd, &extra, 1) == 1) throw Error("grew while it was read").file(path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return text;
}

}  // namespace parity
