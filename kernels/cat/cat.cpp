#include "kernels/cat/cat.h"

#include "core/error.h"
#include "kernels/op_line.h"
#include "kernels/op_traits.h"
#include <cstring>

namespace parity {

namespace {
const Shape* first_taking_part(const std::vector<Shape>& xs) {
  for (const Shape& s : xs) {
    if (!CatParams::skipped(s)) return &s;
  }
  return nullptr;
}
}  // namespace

CatParams CatParams::parse(std::string_view line) { return parse_fields<CatParams>(line); }

std::string CatParams::str() const { return print_fields(*this); }

void CatParams::validate() const { output_shape(); }  // it refuses what cannot be concatenated

std::vector<TensorSpec> CatParams::inputs() const {
  std::vector<TensorSpec> in;
  for (size_t i = 0; i < xs.size(); ++i) in.push_back({"x" + std::to_string(i), dtype, xs[i]});
  return in;
}

int64_t CatParams::resolved_dim() const {
  const Shape* ref = first_taking_part(xs);
  if (!ref) return 0;
  const auto rank = int64_t(ref->rank());
  if (rank == 0) throw Error("cat: zero-dimensional tensors cannot be concatenated (x=" + shapes_text(xs) + ")");
  if (dim < -rank || dim >= rank) {
    throw Error("cat: dim " + std::to_string(dim) + " is out of range for rank " + std::to_string(rank) +
                " (x=" + shapes_text(xs) + ")");
  }
  return dim < 0 ? dim + rank : dim;
}

Shape CatParams::output_shape() const {
  if (xs.empty()) throw Error("cat: needs at least one input");
  const Shape* ref = first_taking_part(xs);
  if (!ref) return Shape{0};
  const int64_t d = resolved_dim();
  std::vector<int64_t> out = ref->dims();
  out[size_t(d)] = 0;
  for (const Shape& s : xs) {
    if (skipped(s)) continue;
    bool same = s.rank() == ref->rank();
    for (size_t i = 0; same && i < s.rank(); ++i) same = int64_t(i) == d || s[i] == (*ref)[i];
    if (!same) {
      throw Error("cat: shapes must match except along dim " + std::to_string(d) + " (x=" + shapes_text(xs) + ")");
    }
    out[size_t(d)] += s[size_t(d)];
  }
  return Shape(out);
}

OpFn cat_op(decltype(&cat_ref) fn) {
  return bind_op<CatParams>([fn](const CatParams& p, const std::vector<Tensor>& in) { return std::vector<Tensor>{fn(p, in)}; });
}

OpTraits cat_traits() {
  OpTraits t = traits_for<CatParams>(cat_op(cat_ref), PARITY_CUDA_OP(cat_op(cat_cuda)));
  t.examples = {"cat x=1x16x8x8,1x16x8x8 dim=1"};
  t.defects = {{"cat_offset", Defect::Strikes::OneCall, Defect::Gives::WrongAnswer, [](const Call&, const std::vector<Tensor>& in) { return in.size() >= 2 && in[1].numel() > 0; },
                [](const Call& call, const std::vector<Tensor>& in, const OpFn& ref) {
                  // The second input written one element late: everything after the first
                  // input's block of the first outer row moves by one element.
                  std::vector<Tensor> out = ref(call, in);
                  Tensor& y = out[0];
                  const CatParams p = call.params<CatParams>();
                  const int64_t d = p.resolved_dim();
                  int64_t inner = 1;
                  for (size_t k = size_t(d) + 1; k < p.xs[0].rank(); ++k) inner *= p.xs[0][k];
                  const size_t item = dtype_size(p.dtype), start = size_t(p.xs[0][size_t(d)] * inner) * item;
                  std::byte* b = y.mutable_bytes();
                  if (start + item < y.nbytes()) std::memmove(b + start + item, b + start, y.nbytes() - start - item);
                  return out;
                }}};
  return t;
}

}  // namespace parity
