#pragma once
// .npy files (numpy's format, NEP 1): the on-disk form of every tensor parity reads or writes.
//
// Read: header versions 1.0, 2.0 and 3.0; little-endian C-order '<f2' '<f4' '<f8' '<i4' '<i8'
// '|u1' '|b1'. Anything else, and any damaged file, is refused with a parity::Error naming the
// file and the reason. Files of at least `map_threshold` bytes are memory-mapped, not copied.
// Write: version 1.0 (64-byte aligned data, as numpy writes it), atomically; at most
// kMaxNpyWriteRank dimensions, so that every file parity writes loads in numpy.
#include <cstddef>
#include <functional>
#include <string>

#include "core/tensor.h"

namespace parity {

struct NpyInfo {
  int major = 1, minor = 0;  // header version
  size_t data_offset = 0;    // bytes before the data
  bool mapped = false;       // the tensor is a view of a mapping
};

struct NpyReadOptions {
  size_t map_threshold = size_t(1) << 20;  // below this, copying is cheaper than mapping
  bool populate = false;                    // map every page at once (MappedFile::open)
};

Tensor read_npy(const std::string& path, const NpyReadOptions& options = {}, NpyInfo* info = nullptr);

// The dtype and shape a .npy file declares, reading only its header (the rest stays unread in a
// lazy mapping). Refuses what read_npy refuses, except bool bytes: a damaged header, and a file
// whose size does not match its shape (truncated or padded).
struct NpyHeaderInfo {
  DType dtype = DType::Float32;
  Shape shape;
  size_t data_offset = 0;
};
NpyHeaderInfo read_npy_header(const std::string& path);

// The data bytes of a .npy file, in order, piece by piece, through a small per-thread buffer
// (read(2), no mapping): each byte passes the cache once, so a hash of a file in the page cache
// runs near memory speed. Refuses what read_npy_header refuses. Returns the header.
NpyHeaderInfo stream_npy_data(const std::string& path, const std::function<void(const std::byte*, size_t)>& consume);

// The whole tensor, read (not mapped) into owned memory piece by piece through read(2);
// `each_piece` sees each piece of data bytes just after it is read, while it is in the cache, so
// hashing it costs little more than the read. Whether this copy or a mapping reads faster depends
// on the kernel's page cache (on the development VM: 10 against 2.4 GB/s in earlier measurements,
// 6 to 9 against 11 to 18 GB/s under Linux 6.18; docs/DESIGN.md, "Reading"). Refuses what
// read_npy refuses.
Tensor read_npy_whole(const std::string& path, const std::function<void(const std::byte*, size_t)>& each_piece = {});

// Parses a whole .npy image held in memory; `name` is used in error messages. The tensor owns a
// copy of the data.
Tensor parse_npy(const std::byte* bytes, size_t size, const std::string& name);

void write_npy(const std::string& path, const Tensor& tensor);
// The same file without the atomic rename and fsync (its writing to disk is started, not waited
// for): for files in a folder made durable as a whole before anything marks it complete (a dump:
// DumpWriter syncs the filesystem once, then writes its manifest). A failed write removes it.
void write_npy_unsynced(const std::string& path, const Tensor& tensor);

// The complete file image write_npy would produce (header and data).
std::string encode_npy(const Tensor& tensor);

// The largest header parity accepts. numpy itself stops at 10,000 bytes unless told otherwise;
// anything past this is damage, not a header.
inline constexpr size_t kMaxNpyHeader = 64 * 1024;

// numpy 1.x refuses arrays of more than 32 dimensions (NPY_MAXDIMS; 64 since numpy 2.0).
inline constexpr size_t kMaxNpyWriteRank = 32;

}  // namespace parity
