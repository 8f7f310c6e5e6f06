#pragma once
// What generic code may ask of an op, answered in the op's own folder: kernels/<op>/<op>.cpp
// defines `OpTraits <op>_traits()`, and kernels/registry.cpp lists it once. Replay, bench, golden,
// the judge, the tolerance policy and the faulty backend ask these questions and never test an
// op's name. They receive the call parsed once (kernels/call.h). Every hook after `ref` may be
// empty: the generic answer then applies (said at each hook).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <typeindex>
#include <vector>

#include "core/rng.h"
#include "kernels/backend.h"

namespace parity {

// The scales of one output element that is a dot product: S = sum |x*w| + |b|, the sum of squared
// products, and the exact value (float64 products are exact; the sum is within ~K 2^-53 S); and
// sum |w|, sum w^2 of the weights whose inputs float16 would round on its subnormal grid (below
// 2^-14, off its 2^-24 steps): such an input moves by up to 2^-25 whatever its size, so its error
// is w * 2^-25, not relative to x * w.
struct DotScales {
  double abs_sum = 0;
  double sum_sq = 0;
  double exact = 0;
  double weight_abs_sum = 0;
  double weight_sq = 0;
};

// Output 0 of a call as dot products of `terms` terms each (a reduction of float32 products),
// bound to the call's inputs. The tolerance policy gives each element a bound proportional to its
// S, and the precision test samples elements channel by channel (channel_dim of `shape`).
struct DotProducts {
  int64_t terms = 0;
  Shape shape;
  size_t channel_dim = 1;
  std::function<DotScales(int64_t element)> scales;
  // Optional: the scales of every channel at one position (an index over the other dims, outer
  // dims before inner ones), into out[0..channels). The precision test samples all channels at
  // a few positions; an op can share the work across channels there (conv2d gathers each window
  // once). Empty: `scales` element by element.
  std::function<void(int64_t position, DotScales* out)> across_channels;
};

// Whether an output that differs from the judge's is a correct answer anyway (an op whose correct
// output is not unique): `allowed` says which freedom it used, `violation` why it is not one.
struct AnswerCheck {
  bool valid = false;
  std::string allowed;
  std::string violation;
};

// A planted defect of the faulty backend (kernels/faulty/faulty.h): on a call it `applies` to,
// `run` gives the defective outputs, given the reference to call.
struct Defect {
  enum class Strikes { OneCall, EveryCall };     // without a call number: the first call it applies to, or every one
  enum class Gives { WrongAnswer, CorrectAnswer };  // CorrectAnswer: another correct one (a tie order), compare must pass it
  std::string name;
  Strikes strikes = Strikes::OneCall;
  Gives gives = Gives::WrongAnswer;
  std::function<bool(const Call& call, const std::vector<Tensor>& inputs)> applies;
  std::function<std::vector<Tensor>(const Call& call, const std::vector<Tensor>& inputs, const OpFn& ref)> run;
};

struct OpTraits {
  std::string name;
  // Reads a line with the op's params struct (throws parity::Error for a bad one): what Call holds.
  std::function<Call::Parsed(std::string_view line)> parse;
  // Valid lines of the op (YOLOv5s shapes where it appears there): the registry's tests run each
  // on every backend and judge it against the reference, so a new op is tested from its folder.
  std::vector<std::string> examples;
  // The project's implementations: the CPU reference, and the CUDA kernel (empty in a build
  // without CUDA). LibTorch's come from the aten plugin, where each _aten.cpp registers its own.
  OpFn ref, cuda;
  // Seeded inputs: fills input `spec` of `call` from `rng` and returns true, or returns false for
  // the generic fill (floats uniform in [-1, 1), bools Bernoulli(density), uint8 uniform in
  // [0, 256), other integers uniform in [-1000, 1000)). `density` is the case's (cases/case_file.h).
  std::function<bool(const Call& call, const TensorSpec& spec, const RngStream& rng, double density, Tensor& t)> seed_input;
  // Output 0 as dot products (conv2d), bound to the inputs; empty: no output is one. Its
  // tolerance and precision test need the call's inputs.
  std::function<DotProducts(const Call& call, const std::vector<Tensor>& inputs)> dot_products;
  // An absolute error a correct kernel may make beyond the dtype's atol, given the unit roundoff
  // of the precision it is judged at (detect_decode rounds values up to 2 on the way and scales
  // them by its stride); empty: none.
  std::function<double(const Call& call, double unit_roundoff)> extra_atol;
  // Output 0 when it differs from the judge's and has its dtype and rank (its length may differ:
  // an NMS keep list): whether it is a correct answer too, from the inputs; empty: only the
  // judge's answer is correct.
  std::function<AnswerCheck(const Call& call, const std::vector<Tensor>& inputs, const Tensor& output)> check_answer;
  // The faulty backend's defects of this op.
  std::vector<Defect> defects;
};

// Every op, in the order YOLOv5 meets them.
const std::vector<OpTraits>& op_table();
// Throws parity::Error naming the known ops for an unknown one.
const OpTraits& op_traits(std::string_view op);
// The traits of a line's op (its first word); throws as op_traits does.
const OpTraits& op_traits_of(std::string_view line);

// Builds the name, the parser and the implementations from an op's params type P (P::kName,
// P::parse, str, inputs).
template <typename P> OpTraits traits_for(OpFn ref, OpFn cuda) {
  OpTraits t;
  t.name = P::kName;
  t.parse = [](std::string_view l) {
    auto p = std::make_shared<const P>(P::parse(l));
    return Call::Parsed{p, std::type_index(typeid(P)), p->str(), p->inputs()};
  };
  t.ref = std::move(ref);
  t.cuda = std::move(cuda);
  return t;
}

// A seed_input hook: every floating input uniform in [lo, hi), the others generic.
inline auto seed_floats(double lo, double hi) {
  return [lo, hi](const Call&, const TensorSpec& s, const RngStream& rng, double, Tensor& t) {
    if (!is_floating(s.dtype)) return false;
    rng.fill_uniform(t, lo, hi);
    return true;
  };
}

// The project's CUDA kernel of an op as traits_for takes it, or none in a build without CUDA.
#ifdef PARITY_HAVE_CUDA
#define PARITY_CUDA_OP(adapter) adapter
#else
#define PARITY_CUDA_OP(adapter) nullptr
#endif

}  // namespace parity
