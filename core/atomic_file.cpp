#include "core/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>

#include "core/error.h"

namespace parity {

namespace {
std::string dir_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Unique among threads of this process; the pid separates processes.
std::atomic<unsigned> g_temp_counter{0};
}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  // Hidden and suffixed so nothing that globs "*.npy" or "manifest.json" ever sees it.
  temp_path_ = dir_of(path_) + "/." + base_of(path_) + ".tmp." + std::to_string(::getpid()) + "." +
               std::to_string(g_temp_counter++);
  fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error("cannot create file: " + errno_text(errno)).file(path_);
}

AtomicFile::~AtomicFile() { discard(); }

int write_fully(int fd, const void* data, size_t size) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return 0;
}

void AtomicFile::write(const void* data, size_t size) {
  if (fd_ < 0) throw Error("write after commit or failure").file(path_);
  if (const int err = write_fully(fd_, data, size)) {
    discard();
    throw Error("write failed: " + errno_text(err)).file(path_);
  }
}

void AtomicFile::commit() {
  if (fd_ < 0) throw Error("commit after commit or failure").file(path_);
  if (::fsync(fd_) != 0 || ::close(fd_) != 0) {
    const int err = errno;
    fd_ = -1;
    ::unlink(temp_path_.c_str());
    throw Error("cannot flush file: " + errno_text(err)).file(path_);
  }
  fd_ = -1;
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp_path_.c_str());
    throw Error("cannot rename temporary into place: " + errno_text(err)).file(path_);
  }
  temp_path_.clear();
  // The rename itself must survive a crash too: flush the directory entry.
  const int dir = ::open(dir_of(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

void AtomicFile::discard() noexcept {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!temp_path_.empty()) {
    ::unlink(temp_path_.c_str());
    temp_path_.clear();
  }
}

void sync_filesystem_of(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot open folder: " + errno_text(errno)).file(dir);
  const int rc = ::syncfs(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) throw Error("cannot flush the files to disk: " + errno_text(err)).file(dir);
}

void write_file_atomically(const std::string& path, std::string_view content) {
  AtomicFile f(path);
  f.write(content);
  f.commit();
}

}  // namespace parity
