#include "core/shape.h"

#include <charconv>

#include "core/error.h"

namespace parity {

int64_t Shape::byte_size(size_t itemsize) const {
  int64_t out = 0;
  if (__builtin_mul_overflow(numel_, static_cast<int64_t>(itemsize), &out)) {
    throw Error("byte size of shape " + str() + " overflows int64");
  }
  return out;
}

Shape::Shape(std::initializer_list<int64_t> dims) : Shape(std::vector<int64_t>(dims)) {}

Shape::Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {
  for (int64_t d : dims_) {
    if (d < 0) throw Error("negative dimension " + std::to_string(d) + " in shape " + str());
  }
  // The count is checked even when a later dimension is zero: a shape whose nonzero dimensions
  // overflow is corrupt, whatever its element count.
  int64_t nonzero_product = 1;
  for (int64_t d : dims_) {
    if (d != 0 && __builtin_mul_overflow(nonzero_product, d, &nonzero_product)) {
      throw Error("element count of shape " + str() + " overflows int64");
    }
  }
  numel_ = 1;
  for (int64_t d : dims_) numel_ *= d;
}

std::string Shape::str() const {
  if (dims_.empty()) return "scalar";
  std::string s;
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) s += 'x';
    s += std::to_string(dims_[i]);
  }
  return s;
}

Shape Shape::parse(std::string_view text) {
  if (text == "scalar") return Shape();
  if (text.empty()) throw Error("empty shape (write 'scalar' for rank 0)");
  std::vector<int64_t> dims;
  size_t pos = 0;
  while (true) {
    const size_t end = text.find('x', pos);
    const std::string_view part = text.substr(pos, end == std::string_view::npos ? end : end - pos);
    int64_t value = 0;
    const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size()) {
      throw Error("bad shape '" + std::string(text) + "': dimension '" + std::string(part) +
                  "' is not a non-negative integer");
    }
    dims.push_back(value);
    if (end == std::string_view::npos) break;
    pos = end + 1;
  }
  return Shape(std::move(dims));
}

}  // namespace parity
