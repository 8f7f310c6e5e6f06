#include "core/npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "core/atomic_file.h"
#include "core/regular_file.h"

namespace parity {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

struct Header {
  int major = 1, minor = 0;
  size_t data_offset = 0;
  DType dtype = DType::Float32;
  Shape shape;
};

// Recursive-descent reader for the one Python literal numpy writes as a header:
//   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
// Errors name the byte offset inside the header text, which is what one needs with a hex dump.
class DictParser {
 public:
  explicit DictParser(std::string_view text) : text_(text) {}

  struct Fields {
    std::optional<std::string> descr;
    std::optional<bool> fortran_order;
    std::optional<std::vector<int64_t>> shape;
  };

  Fields parse() {
    Fields f;
    skip_ws();
    expect('{');
    skip_ws();
    while (!at('}')) {
      const size_t key_pos = pos_;
      const std::string key = string_literal();
      skip_ws();
      expect(':');
      skip_ws();
      if (key == "descr") {
        if (f.descr) fail_at(key_pos, "duplicate key 'descr'");
        if (at('[')) fail("structured dtypes (a list descr) are not supported");
        f.descr = string_literal();
      } else if (key == "fortran_order") {
        if (f.fortran_order) fail_at(key_pos, "duplicate key 'fortran_order'");
        f.fortran_order = boolean();
      } else if (key == "shape") {
        if (f.shape) fail_at(key_pos, "duplicate key 'shape'");
        f.shape = int_tuple();
      } else {
        fail_at(key_pos, "unexpected key '" + key + "'");
      }
      skip_ws();
      if (at(',')) {
        ++pos_;
        skip_ws();
      } else if (!at('}')) {
        fail("expected ',' or '}'");
      }
    }
    ++pos_;
    skip_ws();
    if (pos_ != text_.size()) fail("unexpected text after the closing '}'");
    if (!f.descr) fail_at(0, "header dict lacks 'descr'");
    if (!f.fortran_order) fail_at(0, "header dict lacks 'fortran_order'");
    if (!f.shape) fail_at(0, "header dict lacks 'shape'");
    return f;
  }

 private:
  [[noreturn]] void fail_at(size_t pos, const std::string& what) const {
    throw Error("malformed header dict: " + what + " at offset " + std::to_string(pos));
  }
  [[noreturn]] void fail(const std::string& what) const { fail_at(pos_, what); }

  bool at(char c) const { return pos_ < text_.size() && text_[pos_] == c; }

  void expect(char c) {
    if (!at(c)) fail(std::string("expected '") + c + "'");
    ++pos_;
  }

  void skip_ws() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  std::string string_literal() {
    if (!at('\'') && !at('"')) fail("expected a quoted string");
    const char quote = text_[pos_++];
    const size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\' || text_[pos_] == '\n') fail("unsupported character in string");
      ++pos_;
    }
    if (pos_ == text_.size()) fail_at(start - 1, "unterminated string");
    return std::string(text_.substr(start, pos_++ - start));
  }

  bool boolean() {
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail("expected True or False");
  }

  int64_t integer() {
    const size_t start = pos_;
    if (at('-')) ++pos_;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
    const std::string_view digits = text_.substr(start, pos_ - start);
    if (digits.empty() || digits == "-") fail("expected an integer");
    if (at('L')) ++pos_;  // Python 2's numpy wrote longs as 3L
    int64_t value = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec == std::errc::result_out_of_range) {
      fail_at(start, "dimension " + std::string(digits) + " overflows int64");
    }
    if (ec != std::errc() || ptr != digits.data() + digits.size()) fail_at(start, "bad integer");
    return value;
  }

  std::vector<int64_t> int_tuple() {
    expect('(');
    skip_ws();
    std::vector<int64_t> dims;
    bool trailing_comma = false;
    while (!at(')')) {
      dims.push_back(integer());
      skip_ws();
      trailing_comma = at(',');
      if (trailing_comma) {
        ++pos_;
        skip_ws();
      } else if (!at(')')) {
        fail("expected ',' or ')' in shape");
      }
    }
    // "(3)" is the integer 3 in Python, not a tuple: numpy refuses it too.
    if (dims.size() == 1 && !trailing_comma) fail("shape (n) is not a tuple; write (n,)");
    ++pos_;
    return dims;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

DType dtype_from_descr(const std::string& descr) {
  for (DType dt : kAllDTypes) {
    if (descr == dtype_npy_descr(dt)) return dt;
  }
  if (descr.size() >= 2) {
    const char order = descr[0];
    const std::string kind = descr.substr(1);
    // Byte order means nothing for one-byte types; numpy writes '|' but accepts any prefix.
    if (order == '<' || order == '>' || order == '=') {
      if (kind == "u1") return DType::UInt8;
      if (kind == "b1") return DType::Bool;
    }
    if (order == '>') {
      for (DType dt : kAllDTypes) {
        if (kind == dtype_npy_descr(dt).substr(1)) {
          throw Error("big-endian dtype '" + descr + "' is not supported (save it with astype('<" +
                      kind + "'))");
        }
      }
    }
  }
  throw Error("unsupported dtype '" + descr + "' (supported: <f2 <f4 <f8 <i4 <i8 |u1 |b1)");
}

uint32_t read_le(const std::byte* p, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint32_t(std::to_integer<uint8_t>(p[i])) << (8 * i);
  return v;
}

Header parse_header(const std::byte* bytes, size_t size) {
  if (size == 0) throw Error("empty file, not a .npy file");
  if (std::memcmp(bytes, kMagic, std::min(size, kMagicSize)) != 0) {
    throw Error("not a .npy file (bad magic)");
  }
  if (size < kMagicSize + 2) throw Error("truncated header (file has " + std::to_string(size) + " bytes)");
  Header h;
  h.major = std::to_integer<uint8_t>(bytes[6]);
  h.minor = std::to_integer<uint8_t>(bytes[7]);
  if (h.major < 1 || h.major > 3 || h.minor != 0) {
    throw Error("unsupported .npy version " + std::to_string(h.major) + "." + std::to_string(h.minor) +
                " (1.0, 2.0 and 3.0 are read)");
  }
  const size_t len_size = h.major == 1 ? 2 : 4;
  const size_t preamble = kMagicSize + 2 + len_size;
  if (size < preamble) throw Error("truncated header (file has " + std::to_string(size) + " bytes)");
  const size_t header_len = read_le(bytes + kMagicSize + 2, len_size);
  if (header_len > kMaxNpyHeader) {
    throw Error("header of " + std::to_string(header_len) + " bytes exceeds the 64 KiB limit");
  }
  if (size - preamble < header_len) {
    throw Error("truncated header: it declares " + std::to_string(header_len) + " bytes, the file has " +
                std::to_string(size - preamble) + " after the preamble");
  }
  h.data_offset = preamble + header_len;

  const std::string_view text(reinterpret_cast<const char*>(bytes + preamble), header_len);
  DictParser::Fields fields = DictParser(text).parse();
  if (*fields.fortran_order) {
    throw Error("fortran_order True is not supported (save a C-order array: np.ascontiguousarray)");
  }
  h.dtype = dtype_from_descr(*fields.descr);
  h.shape = Shape(std::move(*fields.shape));  // refuses negative dims and overflowing counts
  return h;
}

void check_size(const Header& h, size_t available) {
  const size_t needed = static_cast<size_t>(h.shape.byte_size(dtype_size(h.dtype)));
  if (available == needed) return;
  throw Error(std::string(available < needed ? "truncated data" : "data size does not match the shape") + ": shape " +
              h.shape.str() + " " + std::string(dtype_name(h.dtype)) + " needs " + std::to_string(needed) +
              " data bytes, the file has " + std::to_string(available));
}

void check_data(const Header& h, const std::byte* data, size_t available) {
  check_size(h, available);
  if (h.dtype == DType::Bool) {
    // A bool byte other than 0 or 1 is not a valid C++ bool; refuse it rather than read it.
    for (size_t i = 0; i < available; ++i) {
      const auto b = std::to_integer<uint8_t>(data[i]);
      if (b > 1) {
        throw Error("bool element " + std::to_string(i) + " holds byte " + std::to_string(b) +
                    " (must be 0 or 1)");
      }
    }
  }
}

Tensor copy_data(const Header& h, const std::byte* data) {
  Tensor t = Tensor::uninitialized(h.dtype, h.shape);  // every byte is written next
  if (t.nbytes()) std::memcpy(t.mutable_bytes(), data, t.nbytes());
  return t;
}

std::string header_text(const Tensor& t) {
  if (t.shape().rank() > kMaxNpyWriteRank) {
    throw Error("cannot write " + std::to_string(t.shape().rank()) + " dimensions: numpy reads at most " +
                std::to_string(kMaxNpyWriteRank));
  }
  std::string dict = "{'descr': '" + std::string(dtype_npy_descr(t.dtype())) +
                     "', 'fortran_order': False, 'shape': (";
  const auto& dims = t.shape().dims();
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) dict += ", ";
    dict += std::to_string(dims[i]);
  }
  dict += dims.size() == 1 ? ",), }" : "), }";

  // Pad with spaces and end in '\n' so the data starts on a 64-byte boundary, as numpy does.
  // With at most kMaxNpyWriteRank dims the header stays far below 1.0's 16-bit length limit,
  // so version 2.0 (for longer headers) is never needed.
  constexpr size_t kPreamble = kMagicSize + 2 + 2;
  const size_t padded = (kPreamble + dict.size() + 1 + 63) / 64 * 64 - kPreamble;
  std::string out(kMagic, kMagicSize);
  out += char(1);
  out += char(0);
  out += char(padded & 0xff);
  out += char(padded >> 8);
  out += dict;
  out.append(padded - dict.size() - 1, ' ');
  out += '\n';
  return out;
}

}  // namespace

Tensor parse_npy(const std::byte* bytes, size_t size, const std::string& name) {
  try {
    const Header h = parse_header(bytes, size);
    check_data(h, bytes + h.data_offset, size - h.data_offset);
    return copy_data(h, bytes + h.data_offset);
  } catch (Error& e) {
    e.file(name);
    throw;
  }
}

Tensor read_npy(const std::string& path, const NpyReadOptions& options, NpyInfo* info) {
  auto file = MappedFile::open(path, options.populate);
  try {
    const Header h = parse_header(file->data(), file->size());
    const std::byte* data = file->data() + h.data_offset;
    check_data(h, data, file->size() - h.data_offset);
    // Map when large, unless the data offset breaks element alignment (hand-made files).
    const bool map = file->size() >= options.map_threshold && h.data_offset % dtype_size(h.dtype) == 0;
    if (info) *info = NpyInfo{h.major, h.minor, h.data_offset, map};
    return map ? Tensor::view(h.dtype, h.shape, std::move(file), h.data_offset) : copy_data(h, data);
  } catch (Error& e) {
    e.file(path);
    throw;
  }
}

namespace {
// An open .npy file read with pread(2) into one small buffer per thread: small enough to stay in
// the cache between the read and its use, and no mapping to fault in and tear down.
class NpyReader {
 public:
  explicit NpyReader(const std::string& path) : path_(path), fd_(open_regular_file(path)) {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) {
      const int err = errno;  // before close, which may set its own
      ::close(fd_);
      throw Error("cannot stat: " + errno_text(err)).file(path);
    }
    size_ = size_t(st.st_size);
  }
  ~NpyReader() { ::close(fd_); }
  NpyReader(const NpyReader&) = delete;
  NpyReader& operator=(const NpyReader&) = delete;

  // The header, checked against the file's size.
  Header header() {
    const size_t head = std::min(size_, kMagicSize + 6 + kMaxNpyHeader);
    const Header h = parse_header(read_at(0, head), head);
    check_size(h, size_ - h.data_offset);
    return h;
  }
  // The data from `from` to the end, piece by piece, into the per-thread buffer, or into `into`
  // (size_ - from bytes) when given.
  void stream(size_t from, const std::function<void(const std::byte*, size_t)>& consume, std::byte* into = nullptr) {
    for (size_t at = from; at < size_;) {
      const size_t n = std::min(kPiece, size_ - at);
      const std::byte* piece = read_at(at, n, into ? into + (at - from) : buffer().data());
      if (consume) consume(piece, n);
      at += n;
    }
  }

  // `size` bytes from `offset` into `p` (the per-thread buffer when not given).
  const std::byte* read_at(size_t offset, size_t size, std::byte* p = buffer().data()) {
    for (size_t got = 0; got < size;) {
      const ssize_t n = ::pread(fd_, p + got, size - got, off_t(offset + got));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw Error("cannot read: " + errno_text(errno)).file(path_);
      if (n == 0) throw Error("file shrank while it was read").file(path_);
      got += size_t(n);
    }
    return p;
  }

 private:
  static constexpr size_t kPiece = size_t(1) << 20;
  static std::vector<std::byte>& buffer() {
    thread_local std::vector<std::byte> b(kPiece);  // holds a header too (at most kMaxNpyHeader)
    return b;
  }

  std::string path_;
  int fd_;
  size_t size_ = 0;
};
}  // namespace

NpyHeaderInfo read_npy_header(const std::string& path) {
  try {
    NpyReader r(path);
    const Header h = r.header();
    return {h.dtype, h.shape, h.data_offset};
  } catch (Error& e) {
    e.file(path);
    throw;
  }
}

NpyHeaderInfo stream_npy_data(const std::string& path, const std::function<void(const std::byte*, size_t)>& consume) {
  try {
    NpyReader r(path);
    const Header h = r.header();
    r.stream(h.data_offset, consume);
    return {h.dtype, h.shape, h.data_offset};
  } catch (Error& e) {
    e.file(path);
    throw;
  }
}

Tensor read_npy_whole(const std::string& path, const std::function<void(const std::byte*, size_t)>& each_piece) {
  try {
    NpyReader r(path);
    const Header h = r.header();
    Tensor t = Tensor::uninitialized(h.dtype, h.shape);
    r.stream(h.data_offset, each_piece, t.mutable_bytes());
    if (h.dtype == DType::Bool) check_data(h, t.bytes(), t.nbytes());
    return t;
  } catch (Error& e) {
    e.file(path);
    throw;
  }
}

std::string encode_npy(const Tensor& tensor) {
  std::string out = header_text(tensor);
  out.append(reinterpret_cast<const char*>(tensor.bytes()), tensor.nbytes());
  return out;
}

namespace {
std::string header_for(const std::string& path, const Tensor& tensor) {
  if (!tensor.defined()) throw Error("cannot write an undefined tensor").file(path);
  try {
    return header_text(tensor);
  } catch (Error& e) {
    e.file(path);
    throw;
  }
}
}  // namespace

void write_npy(const std::string& path, const Tensor& tensor) {
  const std::string header = header_for(path, tensor);
  AtomicFile f(path);
  f.write(header);
  f.write(tensor.bytes(), tensor.nbytes());
  f.commit();
}

void write_npy_unsynced(const std::string& path, const Tensor& tensor) {
  const std::string header = header_for(path, tensor);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error("cannot create file: " + errno_text(errno)).file(path);
  int err = write_fully(fd, header.data(), header.size());
  if (!err) err = write_fully(fd, tensor.bytes(), tensor.nbytes());
  // Start the disk writing now, without waiting for it: the sync that makes the folder durable
  // then finds most pages written already. (Unsupported on some filesystems: nothing lost.)
  if (!err) ::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
  if (::close(fd) != 0 && !err) err = errno;
  if (err) {
    ::unlink(path.c_str());
    throw Error("write failed: " + errno_text(err)).file(path);
  }
}

}  // namespace parity
