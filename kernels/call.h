#pragma once
// A call: an op line parsed once. Its op, its params struct, its canonical line and the inputs it
// expects travel together, so the registry, the backends, the seeded-input generator, the
// tolerance policy, the judge and the faulty backend read the params without parsing the line
// again. The line is for files, messages and REPRO lines:
//   const Call c("conv2d x=1x3x8x8 w=4x3x3x3 bias pad=1");
//   c.params<Conv2dParams>().pad_h;   c.line();   backend("ref").run(c, {x, w, b});
// Built in code from a params struct: Call::of(ThresholdParams{x, 0.25}).
#include <memory>
#include <string>
#include <string_view>
#include <typeindex>
#include <vector>

#include "core/error.h"
#include "core/scoped_setting.h"
#include "core/tensor.h"

namespace parity {

// One input an op expects: its role name, dtype and shape.
struct TensorSpec {
  std::string name;
  DType dtype;
  Shape shape;
};

struct OpTraits;

class Call {
 public:
  // Parses `line` with its op's params struct (which validates it). Throws parity::Error for an
  // unknown op or a bad line.
  explicit Call(std::string_view line);
  // From a params struct built in code: printed and parsed back, so it is validated and canonical.
  template <typename P> static Call of(const P& p) { return Call(p.str()); }

  const OpTraits& traits() const { return *traits_; }
  const std::string& op() const;
  const std::string& line() const { return line_; }  // canonical
  const std::vector<TensorSpec>& inputs() const { return inputs_; }
  // `precision=fp16|bf16` on the line: the call runs in that type. Its float32 inputs hold values
  // of it, and every backend's float32 outputs are rounded to it (the reference once, from its
  // float64 result; LibTorch runs its own half kernels). None for a float32 call.
  HalfType half() const { return half_; }
  // The params struct; throws parity::Error when P is not this op's.
  template <typename P> const P& params() const {
    if (type_ != std::type_index(typeid(P))) throw Error(line_ + ": not a " + P::kName + " call");
    return *static_cast<const P*>(params_.get());
  }

  // What an op's traits give Call (kernels/op_traits.h, traits_for): the params, type-erased.
  struct Parsed {
    std::shared_ptr<const void> params;
    std::type_index type;
    std::string line;
    std::vector<TensorSpec> inputs;
  };

 private:
  const OpTraits* traits_ = nullptr;
  std::shared_ptr<const void> params_;
  std::type_index type_ = typeid(void);
  std::string line_;
  std::vector<TensorSpec> inputs_;
  HalfType half_ = HalfType::None;
};

// The precision of the call a backend is running on this thread: the cuda and aten backends run
// each op inside a HalfScope of its call's type (in_call_precision, kernels/backend.h), for their
// kernels to store that type (kernels/cuda_util.h, "Half precision"; kernels/aten/util.h). None
// outside any scope.
HalfType half_in_scope();
class HalfScope : ScopedSetting<HalfType> {
 public:
  explicit HalfScope(HalfType h);
};

// "fp16", "bf16" (and "fp32" for none), as `precision=` and --dtype spell them.
const char* half_name(HalfType h);
// Throws parity::Error naming the accepted spellings.
HalfType half_from_name(std::string_view name);
// `line` with `precision=<h>` (none for HalfType::None): the call in another precision.
std::string with_half(std::string_view line, HalfType h);

}  // namespace parity
