#pragma once
// A read-only memory mapping of a whole file: large .npy inputs and dump tensors are read in
// place instead of being copied into memory.
#include <cstddef>
#include <memory>
#include <string>

namespace parity {

class MappedFile {
 public:
  // Throws parity::Error naming the path when the file cannot be opened or mapped.
  // `populate`: map every page at once (MAP_POPULATE) instead of faulting them in one by one,
  // for a caller that will read all over the file.
  static std::shared_ptr<const MappedFile> open(const std::string& path, bool populate = false);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  MappedFile(std::string path, const std::byte* data, size_t size)
      : path_(std::move(path)), data_(data), size_(size) {}

  std::string path_;
  const std::byte* data_;
  size_t size_;
  void* slot_ = nullptr;  // where the SIGBUS handler finds this mapping's path (mapped_file.cpp)
};

// A read through a mapping of a file that another process truncated meanwhile raises SIGBUS,
// which would end the process without a word. For a command-line program: from this call on,
// that prints one line on stderr naming the file and exits with `code` (nothing is finished
// after it: a report being written stays a hidden temporary, never a complete-looking file).
// The line starts with `prefix` (the command's, as its other messages do), cut to 63 bytes.
void exit_on_truncated_mapping(int code, const std::string& prefix = "parity: ");

// Takes the whole 2 MiB blocks of a read-only mapping that lie inside [from, to) out of this
// process's resident set, for a caller done reading them: a file streamed through its mapping
// then holds a few MiB at a time, not the file. Read again, the pages fault back in from the
// page cache, the same bytes. Whole blocks only, so one the kernel maps with a single entry is
// not split. Returns where the next call should start: `from` when nothing was released.
const std::byte* release_read_pages(const std::byte* from, const std::byte* to);

}  // namespace parity
