#include <cstring>

#include "kernels/cat/cat.h"

namespace parity {

// Viewed as [outer, along * inner] blocks: each input contributes one contiguous block per
// outer index, copied in input order.
Tensor cat_ref(const CatParams& p, const std::vector<Tensor>& xs) {
  check_inputs(CatParams::kName, p.inputs(), xs);
  const Shape os = p.output_shape();
  Tensor out(p.dtype, os);
  if (out.numel() == 0) return out;
  const auto d = size_t(p.resolved_dim());
  const size_t item = dtype_size(p.dtype);
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < d; ++i) outer *= os[i];
  for (size_t i = d + 1; i < os.rank(); ++i) inner *= os[i];
  const size_t out_row = size_t(os[d] * inner) * item;
  std::byte* dst = out.mutable_bytes();
  size_t offset = 0;
  for (const Tensor& x : xs) {
    if (CatParams::skipped(x.shape())) continue;
    const size_t row = size_t(x.shape()[d] * inner) * item;
    for (int64_t o = 0; o < outer; ++o) std::memcpy(dst + size_t(o) * out_row + offset, x.bytes() + size_t(o) * row, row);
    offset += row;
  }
  return out;
}

}  // namespace parity
