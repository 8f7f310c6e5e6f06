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
#include <tuple>
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
  const std::string& op() const { return op_; }

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
// A pair as a line writes it: "h" when h == w, else "hxw".
std::string hw_text(int64_t h, int64_t w);
// A list of shapes as a line writes it: "2x3,2x5".
std::string shapes_text(const std::vector<Shape>& shapes);

// An op's fields are written once, in line order, in its params struct:
//   template <class Self, class F> static void fields(Self& p, F& f) {
//     f.shape("x", p.x); f.hw("stride", p.stride_h, p.stride_w, 1); f.flag("bias", p.bias);
//   }
// and walked by one of two visitors: OpFieldReader fills them from a line (its parse()), and
// OpFieldWriter prints the canonical line (its str()), a field at its fallback (the value it
// takes when the line leaves it out) left out, but for `integer_always`. parse_fields and
// print_fields below are those two walks.

class OpFieldReader {
 public:
  explicit OpFieldReader(OpLine& line) : l_(line) {}
  void shape(const char* key, Shape& v) { v = l_.shape(key); }
  void shape_list(const char* key, std::vector<Shape>& v) { v = l_.shape_list(key); }
  // A shape [n, width], kept as n (nms's boxes=Nx4); one of another form is refused by finish().
  void rows(const char* key, int64_t& n, int64_t width);
  void integer(const char* key, int64_t& v, int64_t fallback) { v = l_.integer(key, fallback); }
  void integer_always(const char* key, int64_t& v, int64_t fallback) { v = l_.integer(key, fallback); }
  void hw(const char* key, int64_t& h, int64_t& w, int64_t fallback) { std::tie(h, w) = l_.hw(key, fallback); }
  // A pair whose default (when left out, or given as -1) is another pair read before it
  // (maxpool2d's stride is its k).
  void hw(const char* key, int64_t& h, int64_t& w, int64_t fallback_h, int64_t fallback_w);
  void real(const char* key, double& v) { v = l_.real(key); }
  void real(const char* key, double& v, double fallback) { v = l_.real(key, fallback); }
  void real_list(const char* key, std::vector<double>& v) { v = l_.real_list(key); }
  void dtype(const char* key, DType& v, DType fallback) { v = l_.dtype(key, fallback); }
  void flag(const char* name, bool& v) { v = l_.flag(name); }
  // After every field is read: refuses a leftover field or flag, then a field of the wrong form.
  void finish() const;

 private:
  OpLine& l_;
  std::string wrong_form_;  // what rows() found wrong, said once the fields are all read
};

class OpFieldWriter {
 public:
  explicit OpFieldWriter(std::string_view op) : w_(op) {}
  void shape(const char* key, const Shape& v) { w_.field(key, v); }
  void shape_list(const char* key, const std::vector<Shape>& v);
  void rows(const char* key, int64_t n, int64_t width) { w_.field(key, Shape{n, width}); }
  void integer(const char* key, int64_t v, int64_t fallback) {
    if (v != fallback) w_.field(key, v);
  }
  void integer_always(const char* key, int64_t v, int64_t) { w_.field(key, v); }
  void hw(const char* key, int64_t h, int64_t w, int64_t fallback) { w_.hw(key, h, w, fallback); }
  void hw(const char* key, int64_t h, int64_t w, int64_t fallback_h, int64_t fallback_w) {
    if (h != fallback_h || w != fallback_w) w_.field(key, hw_text(h, w));
  }
  void real(const char* key, double v) { w_.real(key, v); }
  void real(const char* key, double v, double fallback) {
    if (v != fallback) w_.real(key, v);
  }
  void real_list(const char* key, const std::vector<double>& v) { w_.real_list(key, v); }
  void dtype(const char* key, DType v, DType fallback) {
    if (v != fallback) w_.field(key, dtype_name(v));
  }
  void flag(const char* name, bool v) { w_.flag(name, v); }
  const std::string& str() const { return w_.str(); }

 private:
  OpLineWriter w_;
};

// P's line read into its fields (refusing an unknown field or flag), then P::validate().
template <typename P> P parse_fields(std::string_view line) {
  OpLine l(line, P::kName);
  P p;
  OpFieldReader r(l);
  P::fields(p, r);
  r.finish();
  p.validate();
  return p;
}

// P's canonical line.
template <typename P> std::string print_fields(const P& p) {
  OpFieldWriter w(P::kName);
  P::fields(p, w);
  return w.str();
}

}  // namespace parity
