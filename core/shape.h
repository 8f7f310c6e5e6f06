#pragma once
// Shape: the dimensions of a C-contiguous tensor. Every Shape that exists is valid: no negative
// dimension and an element count that fits int64 (checked on construction, so later byte-size
// arithmetic cannot overflow unnoticed).
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace parity {

class Shape {
 public:
  Shape() = default;  // rank 0: a scalar with one element
  Shape(std::initializer_list<int64_t> dims);
  explicit Shape(std::vector<int64_t> dims);

  size_t rank() const { return dims_.size(); }
  int64_t operator[](size_t i) const { return dims_[i]; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t numel() const { return numel_; }
  // numel() * itemsize, throwing parity::Error when that leaves int64.
  int64_t byte_size(size_t itemsize) const;

  // "32x3x640x640" as in case files; "scalar" for rank 0. parse() reads it back.
  std::string str() const;
  static Shape parse(std::string_view text);

  friend bool operator==(const Shape& a, const Shape& b) { return a.dims_ == b.dims_; }
  friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }

 private:
  std::vector<int64_t> dims_;
  int64_t numel_ = 1;
};

}  // namespace parity
