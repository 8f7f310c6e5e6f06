#pragma once
// Tensor: a host tensor, C-contiguous, of one DType. Either it owns its bytes (64-byte aligned,
// from core/host_memory.h) or it is a read-only view into a memory-mapped file. Copies share the
// storage, as at::Tensor does; clone() makes an owning deep copy.
#include <cstddef>
#include <memory>

#include "core/dtype.h"
#include "core/error.h"
#include "core/mapped_file.h"
#include "core/shape.h"

namespace parity {

class Tensor {
 public:
  Tensor() = default;  // undefined: defined() is false
  Tensor(DType dtype, Shape shape);  // zero-filled
  // Owned and writable, its bytes not initialised: for a producer that writes every byte.
  static Tensor uninitialized(DType dtype, Shape shape);

  // A read-only view of `shape` elements starting `offset` bytes into `file`. The offset must be
  // aligned for the dtype; the range must lie inside the file.
  static Tensor view(DType dtype, Shape shape, std::shared_ptr<const MappedFile> file, size_t offset);

  bool defined() const { return static_cast<bool>(keep_alive_); }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t numel() const { return shape_.numel(); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }
  bool is_mapped() const { return !writable_ && defined(); }
  bool writable() const { return writable_; }

  const std::byte* bytes() const { return data_; }
  std::byte* mutable_bytes();  // throws on a read-only (mapped) tensor

  // Typed access; throws when T is not the tensor's storage type.
  template <typename T> const T* data() const {
    check_type(dtype_of<T>());
    return reinterpret_cast<const T*>(data_);
  }
  template <typename T> T* mutable_data() {
    check_type(dtype_of<T>());
    return reinterpret_cast<T*>(mutable_bytes());
  }

  Tensor clone() const;

 private:
  void check_type(DType requested) const;

  DType dtype_ = DType::Float32;
  Shape shape_;
  std::shared_ptr<const void> keep_alive_;  // owned buffer or the mapping
  std::byte* data_ = nullptr;
  bool writable_ = false;
};

}  // namespace parity
