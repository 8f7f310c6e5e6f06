#include "kernels/op_line.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "core/error.h"

namespace parity {

namespace {
// Every integer and dimension of an op line stays within int32's range, so the params' shape
// arithmetic (products of two fields, sums over a few hundred inputs) can never overflow int64.
// No tensor parity meets has a dimension past 2^31 - 1.
constexpr int64_t kMaxLineInt = 2147483647;

bool parse_int(const std::string& s, int64_t& out) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size() && out >= -kMaxLineInt && out <= kMaxLineInt;
}

Shape bounded_shape(const std::string& text) {
  Shape s = Shape::parse(text);
  for (int64_t d : s.dims()) {
    if (d > kMaxLineInt) throw Error("dimension " + std::to_string(d) + " exceeds 2147483647");
  }
  return s;
}
}  // namespace

OpLine::OpLine(std::string_view line, std::string_view op) : op_(op) {
  std::istringstream in{std::string(line)};
  std::string word;
  if (!(in >> word) || word != op) {
    throw Error("expected a '" + std::string(op) + "' line, got '" + std::string(line) + "'");
  }
  while (in >> word) {
    const size_t eq = word.find('=');
    if (eq == std::string::npos) {
      flags_.push_back(word);
      continue;
    }
    const std::string key = word.substr(0, eq);
    if (fields_.count(key)) throw Error(op_ + ": field '" + key + "' given twice");
    fields_[key] = word.substr(eq + 1);
  }
}

std::optional<std::string> OpLine::take(const std::string& key) {
  auto it = fields_.find(key);
  if (it == fields_.end()) return std::nullopt;
  std::string v = it->second;
  fields_.erase(it);
  return v;
}

void OpLine::fail(const std::string& key, const std::string& value, const std::string& what) const {
  throw Error(op_ + ": field " + key + "=" + value + ": " + what);
}

Shape OpLine::shape(const std::string& key) {
  auto s = optional_shape(key);
  if (!s) throw Error(op_ + ": missing field " + key + "=<shape>");
  return *s;
}

std::optional<Shape> OpLine::optional_shape(const std::string& key) {
  const auto v = take(key);
  if (!v) return std::nullopt;
  try {
    return bounded_shape(*v);
  } catch (const Error& e) {
    fail(key, *v, e.message());
  }
}

std::vector<Shape> OpLine::shape_list(const std::string& key) {
  const auto v = take(key);
  if (!v) throw Error(op_ + ": missing field " + key + "=<shape>,<shape>...");
  std::vector<Shape> out;
  size_t pos = 0;
  while (true) {
    const size_t comma = v->find(',', pos);
    const std::string part = v->substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    try {
      out.push_back(bounded_shape(part));
    } catch (const Error& e) {
      fail(key, *v, e.message());
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

int64_t OpLine::integer(const std::string& key, int64_t fallback) {
  const auto v = take(key);
  if (!v) return fallback;
  int64_t out = 0;
  if (!parse_int(*v, out)) fail(key, *v, "not an integer within +-2147483647");
  return out;
}

std::pair<int64_t, int64_t> OpLine::hw(const std::string& key, int64_t fallback) {
  const auto v = take(key);
  if (!v) return {fallback, fallback};
  const size_t x = v->find('x');
  int64_t h = 0, w = 0;
  if (x == std::string::npos) {
    if (!parse_int(*v, h)) fail(key, *v, "not an integer or HxW pair");
    return {h, h};
  }
  if (!parse_int(v->substr(0, x), h) || !parse_int(v->substr(x + 1), w)) {
    fail(key, *v, "not an integer or HxW pair");
  }
  return {h, w};
}

double OpLine::real(const std::string& key) {
  if (!fields_.count(key)) throw Error(op_ + ": missing field " + key + "=<number>");
  return real(key, 0.0);
}

double OpLine::real(const std::string& key, double fallback) {
  const auto v = take(key);
  if (!v) return fallback;
  char* end = nullptr;
  const double d = std::strtod(v->c_str(), &end);
  if (v->empty() || end != v->c_str() + v->size()) fail(key, *v, "not a number");
  return d;
}

std::vector<double> OpLine::real_list(const std::string& key) {
  const auto v = take(key);
  if (!v) throw Error(op_ + ": missing field " + key + "=<number>,<number>...");
  std::vector<double> out;
  size_t pos = 0;
  while (true) {
    const size_t comma = v->find(',', pos);
    const std::string part = v->substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char* end = nullptr;
    const double d = std::strtod(part.c_str(), &end);
    if (part.empty() || end != part.c_str() + part.size()) fail(key, *v, "not a list of numbers");
    out.push_back(d);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

DType OpLine::dtype(const std::string& key, DType fallback) {
  const auto v = take(key);
  if (!v) return fallback;
  const auto dt = dtype_from_name(*v);
  if (!dt) fail(key, *v, "unknown dtype (float16 float32 float64 int32 int64 uint8 bool)");
  return *dt;
}

bool OpLine::flag(const std::string& name) {
  for (auto it = flags_.begin(); it != flags_.end(); ++it) {
    if (*it == name) {
      flags_.erase(it);
      return true;
    }
  }
  return false;
}

void OpLine::finish() const {
  if (!fields_.empty()) throw Error(op_ + ": unknown field '" + fields_.begin()->first + "'");
  if (!flags_.empty()) throw Error(op_ + ": unknown flag '" + flags_.front() + "'");
}

OpLineWriter& OpLineWriter::field(std::string_view key, std::string_view value) {
  line_ += ' ';
  line_ += key;
  line_ += '=';
  line_ += value;
  return *this;
}

OpLineWriter& OpLineWriter::hw(std::string_view key, int64_t h, int64_t w, int64_t fallback) {
  if (h == fallback && w == fallback) return *this;
  return field(key, hw_text(h, w));
}

std::string hw_text(int64_t h, int64_t w) { return h == w ? std::to_string(h) : std::to_string(h) + "x" + std::to_string(w); }

OpLineWriter& OpLineWriter::real(std::string_view key, double v) { return field(key, shortest_double(v)); }

OpLineWriter& OpLineWriter::real_list(std::string_view key, const std::vector<double>& v) {
  std::string text;
  for (double d : v) text += (text.empty() ? "" : ",") + shortest_double(d);
  return field(key, text);
}

OpLineWriter& OpLineWriter::flag(std::string_view name, bool on) {
  if (on) {
    line_ += ' ';
    line_ += name;
  }
  return *this;
}

void OpFieldReader::rows(const char* key, int64_t& n, int64_t width) {
  const Shape s = l_.shape(key);
  if ((s.rank() != 2 || s[1] != width) && wrong_form_.empty()) {
    wrong_form_ = l_.op() + ": " + key + " must be [N," + std::to_string(width) + "], got " + s.str();
  }
  n = s.rank() > 0 ? s[0] : 0;
}

void OpFieldReader::hw(const char* key, int64_t& h, int64_t& w, int64_t fallback_h, int64_t fallback_w) {
  std::tie(h, w) = l_.hw(key, -1);
  if (h == -1 && w == -1) h = fallback_h, w = fallback_w;
}

void OpFieldReader::finish() const {
  l_.finish();
  if (!wrong_form_.empty()) throw Error(wrong_form_);
}

void OpFieldWriter::shape_list(const char* key, const std::vector<Shape>& v) { w_.field(key, shapes_text(v)); }

std::string shapes_text(const std::vector<Shape>& shapes) {
  std::string text;
  for (const Shape& s : shapes) text += (text.empty() ? "" : ",") + s.str();
  return text;
}

std::string shortest_double(double v) {
  char buf[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) != v) continue;
    // "1e+01" reads back as 10 but is no way to write an anchor size: take more digits until
    // the fixed form appears, for magnitudes where that form is short.
    const double a = std::fabs(v);
    if (std::strchr(buf, 'e') && a >= 1e-4 && a < 1e15) continue;
    break;
  }
  return buf;
}

}  // namespace parity
