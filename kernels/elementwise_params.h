#pragma once
// Params of elementwise ops whose line is just a shape and a dtype: "<op> x=SHAPE [dtype=D]".
// Each op names itself with a tag giving its name, its input names (all of shape x) and the
// dtypes it accepts: using SiluParams = ElementwiseParams<SiluTag>.
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "kernels/backend.h"
#include "kernels/op_line.h"

namespace parity {

template <typename Tag> struct ElementwiseParams {
  static constexpr const char* kName = Tag::kName;
  Shape x;
  DType dtype = DType::Float32;

  template <class Self, class F> static void fields(Self& p, F& f) {  // the line's fields, in order (kernels/op_line.h)
    f.shape("x", p.x);
    f.dtype("dtype", p.dtype, DType::Float32);
  }
  static ElementwiseParams parse(std::string_view line) { return parse_fields<ElementwiseParams>(line); }
  std::string str() const { return print_fields(*this); }
  void validate() const {
    if (!Tag::accepts(dtype)) throw Error(std::string(kName) + ": dtype " + std::string(dtype_name(dtype)) + " is not supported");
  }
  std::vector<TensorSpec> inputs() const {
    std::vector<TensorSpec> in;
    for (const char* name : Tag::kInputs) in.push_back({name, dtype, x});
    return in;
  }
  friend bool operator==(const ElementwiseParams& a, const ElementwiseParams& b) { return a.x == b.x && a.dtype == b.dtype; }
};

inline bool is_float32_or_64(DType dt) { return dt == DType::Float32 || dt == DType::Float64; }

}  // namespace parity
