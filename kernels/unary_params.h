#pragma once
// Params of the ops that take one tensor and nothing else: "<op> x=SHAPE [dtype=D]".
// Each such op names itself with a tag: using SiluParams = UnaryParams<SiluTag>.
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "kernels/backend.h"
#include "kernels/op_line.h"

namespace parity {

template <typename Tag> struct UnaryParams {
  static constexpr const char* kName = Tag::kName;
  Shape x;
  DType dtype = DType::Float32;

  static UnaryParams parse(std::string_view line) {
    OpLine l(line, kName);
    UnaryParams p;
    p.x = l.shape("x");
    p.dtype = l.dtype("dtype", DType::Float32);
    l.finish();
    if (!Tag::accepts(p.dtype)) {
      throw Error(std::string(kName) + ": dtype " + std::string(dtype_name(p.dtype)) + " is not supported");
    }
    return p;
  }
  std::string str() const {
    OpLineWriter w(kName);
    w.field("x", x);
    if (dtype != DType::Float32) w.field("dtype", dtype_name(dtype));
    return w.str();
  }
  std::vector<TensorSpec> inputs() const { return {{"x", dtype, x}}; }
  friend bool operator==(const UnaryParams& a, const UnaryParams& b) { return a.x == b.x && a.dtype == b.dtype; }
};

// Adapter for unary typed entry points Tensor f(const P&, const Tensor& x).
template <typename P> OpFn unary_op(Tensor (*fn)(const P&, const Tensor&)) {
  return bind_op<P>([fn](const P& p, const std::vector<Tensor>& in) { return std::vector<Tensor>{fn(p, in[0])}; });
}

inline bool is_float32_or_64(DType dt) { return dt == DType::Float32 || dt == DType::Float64; }

}  // namespace parity
