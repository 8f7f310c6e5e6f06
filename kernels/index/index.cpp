#include "kernels/index/index.h"

#include "core/error.h"
#include "kernels/op_line.h"
#include "kernels/op_traits.h"

namespace parity {

// Written out rather than as a field list (kernels/op_line.h): which one of mask=, idx= and pairs=
// the line gives chooses the mode, and the mode which fields print.
IndexParams IndexParams::parse(std::string_view line) {
  OpLine l(line, kName);
  IndexParams p;
  p.x = l.shape("x");
  p.dtype = l.dtype("dtype", DType::Float32);
  const auto mask = l.optional_shape("mask");
  const int64_t idx = l.integer("idx", -1), pairs = l.integer("pairs", -1);
  p.dim = l.integer("dim", 0);
  l.finish();
  const int modes = int(mask.has_value()) + int(idx >= 0) + int(pairs >= 0);
  auto fail = [&](const std::string& what) { throw Error("index: " + what + " (x=" + p.x.str() + ")"); };
  if (modes != 1) fail("give exactly one of mask=SHAPE, idx=N, pairs=N (N >= 0)");
  if (mask) {
    p.mode = Mode::Mask;
    p.mask = *mask;
    bool covers = p.mask.rank() <= p.x.rank() && p.mask.rank() > 0;
    for (size_t i = 0; covers && i < p.mask.rank(); ++i) covers = p.mask[i] == p.x[i];
    if (!covers) fail("mask shape " + p.mask.str() + " must equal the leading dims of x");
  } else if (idx >= 0) {
    p.mode = Mode::Select;
    p.n = idx;
    const auto rank = int64_t(p.x.rank());
    if (rank == 0 || p.dim < -rank || p.dim >= rank) fail("dim " + std::to_string(p.dim) + " is out of range");
  } else {
    p.mode = Mode::Pairs;
    p.n = pairs;
    if (p.x.rank() < 2) fail("pairs indexing needs x of rank 2 or more");
  }
  if (p.mode != Mode::Select && p.dim != 0) fail("dim= applies to idx= only");
  return p;
}

std::string IndexParams::str() const {
  OpLineWriter w(kName);
  w.field("x", x);
  switch (mode) {
    case Mode::Mask: w.field("mask", mask); break;
    case Mode::Select:
      w.field("idx", n);
      if (dim != 0) w.field("dim", dim);
      break;
    case Mode::Pairs: w.field("pairs", n); break;
  }
  if (dtype != DType::Float32) w.field("dtype", dtype_name(dtype));
  return w.str();
}

std::vector<TensorSpec> IndexParams::inputs() const {
  switch (mode) {
    case Mode::Mask: return {{"x", dtype, x}, {"mask", DType::Bool, mask}};
    case Mode::Select: return {{"x", dtype, x}, {"idx", DType::Int64, Shape{n}}};
    case Mode::Pairs: return {{"x", dtype, x}, {"i", DType::Int64, Shape{n}}, {"j", DType::Int64, Shape{n}}};
  }
  return {};
}

Shape IndexParams::output_shape(int64_t mask_count) const {
  std::vector<int64_t> dims;
  switch (mode) {
    case Mode::Mask:
      dims.push_back(mask_count);
      dims.insert(dims.end(), x.dims().begin() + int64_t(mask.rank()), x.dims().end());
      break;
    case Mode::Select:
      dims = x.dims();
      dims[size_t(resolved_dim())] = n;
      break;
    case Mode::Pairs:
      dims.push_back(n);
      dims.insert(dims.end(), x.dims().begin() + 2, x.dims().end());
      break;
  }
  return Shape(dims);
}

OpFn index_op(decltype(&index_ref) fn) {
  return bind_op<IndexParams>([fn](const IndexParams& p, const std::vector<Tensor>& in) { return std::vector<Tensor>{fn(p, in)}; });
}

OpTraits index_traits() {
  OpTraits t = traits_for<IndexParams>(index_op(index_ref), PARITY_CUDA_OP(index_op(index_cuda)));
  t.examples = {"index x=100x85 mask=100"};
  t.seed_input = [](const Call& call, const TensorSpec& s, const RngStream& rng, double, Tensor& out) {
    if (s.dtype != DType::Int64) return false;
    // Indices in range of the dimension they index: idx -> the selected dim, i -> dim 0, j -> dim 1.
    const IndexParams p = call.params<IndexParams>();
    const int64_t size = s.name == "idx" ? p.x[size_t(p.resolved_dim())] : s.name == "i" ? p.x[0] : p.x[1];
    if (size > 0) rng.fill_uniform(out, 0, double(size));
    return true;
  };
  return t;
}

}  // namespace parity
