#pragma once
// AtomicFile: write a file so that readers see either the old content or the complete new one,
// never a torn file. Bytes go to a hidden temporary beside the target; commit() fsyncs it,
// renames it over the target and fsyncs the directory. Destroyed without commit() (an error, an
// exception), it removes the temporary and leaves the target untouched.
#include <cstddef>
#include <string>
#include <string_view>

namespace parity {

class AtomicFile {
 public:
  explicit AtomicFile(std::string path);  // throws parity::Error if the temporary can't be made
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t size);
  void write(std::string_view text) { write(text.data(), text.size()); }
  void commit();

  const std::string& temp_path() const { return temp_path_; }

 private:
  void discard() noexcept;

  std::string path_, temp_path_;
  int fd_ = -1;
};

// Writes all `size` bytes to `fd`, retrying short and interrupted writes; 0, or the errno.
int write_fully(int fd, const void* data, size_t size);

// Flushes every file of the filesystem holding `dir` to disk (syncfs(2)): one wait for a folder
// of many files written without fsync, instead of one per file.
void sync_filesystem_of(const std::string& dir);

// Writes `content` to `path` through an AtomicFile.
void write_file_atomically(const std::string& path, std::string_view content);

}  // namespace parity
