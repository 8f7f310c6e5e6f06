#include "core/tensor.h"

#include <cstring>
#include <string>

#include "core/host_memory.h"

namespace parity {

Tensor::Tensor(DType dtype, Shape shape) : Tensor(uninitialized(dtype, std::move(shape))) {
  if (nbytes()) std::memset(data_, 0, nbytes());
}

Tensor Tensor::uninitialized(DType dtype, Shape shape) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.shape_.byte_size(dtype_size(dtype));  // throws before an absurd allocation is tried
  // Never a null pointer, even for zero elements, so data() is always usable as a base.
  auto buffer = host_buffer(t.nbytes());
  t.data_ = buffer.get();
  t.keep_alive_ = std::move(buffer);
  t.writable_ = true;
  return t;
}

Tensor Tensor::view(DType dtype, Shape shape, std::shared_ptr<const MappedFile> file, size_t offset) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  const int64_t nbytes = t.shape_.byte_size(dtype_size(dtype));
  if (offset > file->size() || static_cast<uint64_t>(nbytes) > file->size() - offset) {
    throw Error("view of " + std::to_string(nbytes) + " bytes at offset " + std::to_string(offset) +
                " lies outside the file of " + std::to_string(file->size()) + " bytes")
        .file(file->path());
  }
  if (offset % dtype_size(dtype) != 0) {
    throw Error("view offset " + std::to_string(offset) + " is not aligned for " +
                std::string(dtype_name(dtype)))
        .file(file->path());
  }
  // An empty file has no mapping; any non-null base serves a zero-byte view.
  static const std::byte kEmpty[1] = {};
  const std::byte* base = file->size() ? file->data() + offset : kEmpty;
  t.data_ = const_cast<std::byte*>(base);  // never written through: writable_ stays false
  t.keep_alive_ = std::move(file);
  return t;
}

std::byte* Tensor::mutable_bytes() {
  if (!writable_) throw Error("tensor is a read-only view of a mapped file").shape(shape_.str());
  return data_;
}

Tensor Tensor::clone() const {
  if (!defined()) return Tensor();
  Tensor out = uninitialized(dtype_, shape_);
  if (nbytes()) std::memcpy(out.data_, data_, nbytes());
  return out;
}

void Tensor::check_type(DType requested) const {
  if (!defined()) throw Error("access to an undefined tensor");
  if (requested != dtype_) {
    throw Error("tensor holds " + std::string(dtype_name(dtype_)) + ", accessed as " +
                std::string(dtype_name(requested)))
        .shape(shape_.str());
  }
}

}  // namespace parity
