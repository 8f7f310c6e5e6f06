#pragma once
// The one-line form of an op call, shared by every op's params struct:
//   <op> key=value ... flag ...      e.g. "conv2d x=1x3x640x640 w=32x3x6x6 bias stride=2 pad=2"
// OpLine reads it field by field (each getter consumes its field; finish() refuses leftovers,
// so a typo is an error, never silently ignored). OpLineWriter prints the canonical form: the
// fields in the op's fixed order, defaults left out.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"

namespace parity {

class OpLine {
 public:
  // Throws parity::Error unless the first word is `op`.
  OpLine(std::string_view line, std::string_view op);

  Shape shape(const std::string& key);
  std::optional<Shape> optional_shape(const std::string& key);
  std::vector<Shape> shape_list(const std::string& key);  // "2x3,2x5"
  int64_t integer(const std::string& key, int64_t fallback);
  // "2" (both) or "2x1" (height x width).
  std::pair<int64_t, int64_t> hw(const std::string& key, int64_t fallback);
  double real(const std::string& key);
  std::vector<double> real_list(const std::string& key);  // required: "10,13,16,30"
  double real(const std::string& key, double fallback);
  DType dtype(const std::string& key, DType fallback);
  bool flag(const std::string& name);
  // Throws when a field was never consumed (unknown or misspelt).
  void finish() const;

 private:
  std::optional<std::string> take(const std::string& key);
  [[noreturn]] void fail(const std::string& key, const std::string& value, const std::string& what) const;

  std::string op_;
  std::map<std::string, std::string> fields_;
  std::vector<std::string> flags_;
};

class OpLineWriter {
 public:
  explicit OpLineWriter(std::string_view op) : line_(op) {}
  OpLineWriter& field(std::string_view key, std::string_view value);
  OpLineWriter& field(std::string_view key, const Shape& s) { return field(key, s.str()); }
  OpLineWriter& field(std::string_view key, int64_t v) { return field(key, std::to_string(v)); }
  // Prints "h" when h == w, else "hxw"; nothing when both equal `fallback`.
  OpLineWriter& hw(std::string_view key, int64_t h, int64_t w, int64_t fallback);
  // Shortest text that reads back to the same double.
  OpLineWriter& real(std::string_view key, double v);
  OpLineWriter& real_list(std::string_view key, const std::vector<double>& v);
  OpLineWriter& flag(std::string_view name, bool on = true);
  const std::string& str() const { return line_; }

 private:
  std::string line_;
};

std::string shortest_double(double v);

}  // namespace parity
