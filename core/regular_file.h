#pragma once
// Opening a file parity was told to read (a dump's manifest and tensors, a case file): it must be
// a regular file. A FIFO would block the open forever, /dev/zero would be read until memory runs
// out, a folder fails deep inside the standard library; each is refused here with one line.
#include <cstddef>
#include <string>

namespace parity {

// An fd open for reading on `path`, which must be a regular file (links followed); throws
// parity::Error naming the path and what it is instead ("a FIFO", "a character device"). Opened
// without blocking, so a FIFO is refused rather than waited on.
int open_regular_file(const std::string& path);

// The whole of a regular file of at most `max_bytes`; larger is refused, naming the limit.
std::string read_regular_file(const std::string& path, size_t max_bytes);

}  // namespace parity
