#include "compare/view_chain.h"

#include <cmath>
#include <sstream>

#include "core/half.h"
#include "core/stats.h"

namespace parity {
namespace {

struct Values {
  std::vector<double> v;
  std::vector<int64_t> shape;
};

int64_t count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s;
  for (size_t k = 0; k < shape.size(); ++k) s += (k ? "x" : "") + std::to_string(shape[k]);
  return s.empty() ? "scalar" : s;
}

// Calls fn(position) for each element of a strided tensor in C order; false when a position
// falls outside [0, limit).
template <typename Fn> bool each_position(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides, int64_t offset,
                                          int64_t limit, Fn&& fn) {
  const int64_t n = count(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t pos = offset;
    for (size_t k = 0; k < shape.size(); ++k) pos += idx[k] * strides[k];
    if (pos < 0 || pos >= limit) return false;
    fn(i, pos);
    for (size_t k = shape.size(); k-- > 0;) {
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
  }
  return true;
}

int64_t extent(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides, int64_t offset) {
  if (count(shape) == 0) return offset;
  int64_t last = offset;
  for (size_t k = 0; k < shape.size(); ++k) last += (shape[k] - 1) * strides[k];
  return last + 1;
}

// The gather a view step is: the base's values laid into its storage, then read at the view's
// positions. "" when it fits, else why not.
std::string apply_view(Values& cur, const ViaStep& s) {
  if (s.base_shape != cur.shape) return "it starts from a " + shape_text(s.base_shape) + " tensor, the producer's is " + shape_text(cur.shape);
  for (int64_t st : s.base_strides) if (st < 0) return "negative strides";
  for (int64_t st : s.strides) if (st < 0) return "negative strides";
  const int64_t size = std::max(extent(s.base_shape, s.base_strides, 0), extent(s.shape, s.strides, s.offset));
  // A storage far larger than what it holds is not a layout PyTorch makes for a view: refuse it
  // rather than allocate it.
  if (size > 4 * (count(s.base_shape) + count(s.shape)) + 4096) return "a storage of " + std::to_string(size) + " elements";
  std::vector<double> storage(size_t(size), 0.0);
  std::vector<uint8_t> known(size_t(size), 0);
  each_position(s.base_shape, s.base_strides, 0, size, [&](int64_t i, int64_t pos) {
    storage[size_t(pos)] = cur.v[size_t(i)];
    known[size_t(pos)] = 1;
  });
  Values out{std::vector<double>(size_t(count(s.shape))), s.shape};
  bool covered = true;
  each_position(s.shape, s.strides, s.offset, size, [&](int64_t i, int64_t pos) {
    covered = covered && known[size_t(pos)];
    out.v[size_t(i)] = storage[size_t(pos)];
  });
  if (!covered) return "it reads storage the producer's output does not cover";
  cur = std::move(out);
  return "";
}

// A cast's rounding, and the slack one rounding of its source before it may leave (one unit of
// the cast's dtype at the value; 1 for an integer).
std::string apply_cast(Values& cur, const std::string& dtype, double& rel_slack, double& abs_slack) {
  for (double& x : cur.v) {
    if (std::isnan(x)) continue;
    if (dtype == "float16") x = half_to_float(float_to_half(float(x)));
    else if (dtype == "bfloat16") x = round_mantissa(float(x), 7);
    else if (dtype == "float32") x = double(float(x));
    else if (dtype == "bool") x = x != 0 ? 1 : 0;
    else if (dtype == "float64") continue;
    else if (dtype == "int64" || dtype == "int32" || dtype == "int16" || dtype == "int8" || dtype == "uint8") x = std::trunc(x);
    else return "a cast to " + dtype;
  }
  if (dtype == "float16") rel_slack = std::max(rel_slack, std::ldexp(1.0, -10)), abs_slack = std::max(abs_slack, std::ldexp(1.0, -24));
  if (dtype == "bfloat16") rel_slack = std::max(rel_slack, std::ldexp(1.0, -7));
  if (dtype.rfind("int", 0) == 0 || dtype == "uint8") abs_slack = std::max(abs_slack, 1.0);
  return "";
}

std::string index_text(int64_t i, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t k = shape.size(); k-- > 0;) {
    idx[k] = shape[k] ? i % shape[k] : 0;
    i = shape[k] ? i / shape[k] : 0;
  }
  std::string s = "[";
  for (size_t k = 0; k < idx.size(); ++k) s += (k ? ", " : "") + std::to_string(idx[k]);
  return s + "]";
}

std::string number(double v) {
  std::ostringstream o;
  o.precision(9);
  o << v;
  return o.str();
}

}  // namespace

std::string via_text(const std::vector<ViaStep>& steps) {
  std::string s;
  for (const ViaStep& step : steps) s += step.op;
  return s.empty() ? "a copy" : s;
}

bool indexed_by_data(const std::vector<ViaStep>& steps) {
  for (const ViaStep& step : steps) {
    if (step.op.find("<tensor>") != std::string::npos) return true;
  }
  return false;
}

std::vector<int64_t> via_sources(const std::vector<int64_t>& shape, const std::vector<ViaStep>& steps) {
  Values cur{std::vector<double>(size_t(count(shape))), shape};
  for (size_t i = 0; i < cur.v.size(); ++i) cur.v[i] = double(i);  // exact below 2^53
  for (const ViaStep& s : steps) {
    if (s.view && !apply_view(cur, s).empty()) return {};
  }
  return std::vector<int64_t>(cur.v.begin(), cur.v.end());
}

ViaCheck check_via(const Tensor& producer, const Tensor& input, const std::vector<ViaStep>& steps) {
  ViaCheck c;
  Values cur{std::vector<double>(size_t(producer.numel())), producer.shape().dims()};
  for (int64_t i = 0; i < producer.numel(); ++i) cur.v[size_t(i)] = element_as_double(producer, i);
  double rel_slack = 0, abs_slack = 0;
  for (const ViaStep& s : steps) {
    c.why_not = s.view ? apply_view(cur, s) : s.cast.empty() ? "" : apply_cast(cur, s.cast, rel_slack, abs_slack);
    if (!c.why_not.empty()) return c;
  }
  c.checked = true;
  if (cur.shape != input.shape().dims()) {
    if (count(cur.shape) != input.numel()) {
      c.mismatch = "it is " + input.shape().str() + ", the chain gives " + shape_text(cur.shape);
      return c;
    }
  }
  // The input as written: its file's dtype rounds the chain's values once more.
  Values written{cur.v, cur.shape};
  const std::string dtype(dtype_name(input.dtype()));
  double unused_rel = 0, unused_abs = 0;
  if (is_floating(input.dtype()) || dtype == "bool") apply_cast(written, dtype, unused_rel, unused_abs);
  for (int64_t i = 0; i < input.numel(); ++i) {
    const double got = element_as_double(input, i), want = written.v[size_t(i)];
    if (got == want || (std::isnan(got) && std::isnan(want))) continue;
    if (std::fabs(got - want) <= rel_slack * std::fabs(want) + abs_slack) continue;
    c.mismatch = "at " + index_text(i, input.shape().dims()) + " it holds " + number(got) + " where that gives " + number(want);
    return c;
  }
  return c;
}

}  // namespace parity
