#include <cstring>

#include "core/error.h"
#include "kernels/index/index.h"

namespace parity {

namespace {
// Python's rule: -size <= i < size, negatives count from the end.
int64_t wrap(int64_t i, int64_t size, const char* name, int64_t pos) {
  if (i < -size || i >= size) {
    throw Error("index: " + std::string(name) + "[" + std::to_string(pos) + "] = " + std::to_string(i) +
                " is out of range for a dimension of size " + std::to_string(size));
  }
  return i < 0 ? i + size : i;
}

// Row r of x viewed as [rows, row_bytes].
void copy_row(const Tensor& x, int64_t r, size_t row_bytes, std::byte* dst) {
  std::memcpy(dst, x.bytes() + size_t(r) * row_bytes, row_bytes);
}
}  // namespace

Tensor index_ref(const IndexParams& p, const std::vector<Tensor>& in) {
  check_inputs(IndexParams::kName, p.inputs(), in);
  const Tensor& x = in[0];
  const size_t item = dtype_size(p.dtype);
  switch (p.mode) {
    case IndexParams::Mode::Mask: {
      const bool* m = in[1].data<bool>();
      int64_t count = 0;
      for (int64_t i = 0; i < in[1].numel(); ++i) count += m[i];
      Tensor out(p.dtype, p.output_shape(count));
      const size_t row = in[1].numel() ? x.nbytes() / size_t(in[1].numel()) : 0;
      std::byte* dst = out.mutable_bytes();
      for (int64_t i = 0; i < in[1].numel(); ++i) {
        if (m[i]) copy_row(x, i, row, dst), dst += row;
      }
      return out;
    }
    case IndexParams::Mode::Select: {
      Tensor out(p.dtype, p.output_shape());
      const auto d = size_t(p.resolved_dim());
      int64_t outer = 1, inner = 1;
      for (size_t i = 0; i < d; ++i) outer *= p.x[i];
      for (size_t i = d + 1; i < p.x.rank(); ++i) inner *= p.x[i];
      const int64_t size = p.x[d];
      const int64_t* idx = in[1].data<int64_t>();
      std::vector<int64_t> rows(size_t(p.n));
      for (int64_t k = 0; k < p.n; ++k) rows[size_t(k)] = wrap(idx[k], size, "idx", k);
      const size_t chunk = size_t(inner) * item;
      std::byte* dst = out.mutable_bytes();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t k = 0; k < p.n; ++k) {
          std::memcpy(dst, x.bytes() + (size_t(o * size + rows[size_t(k)])) * chunk, chunk);
          dst += chunk;
        }
      }
      return out;
    }
    case IndexParams::Mode::Pairs: {
      Tensor out(p.dtype, p.output_shape());
      const int64_t rows = p.x[0], cols = p.x[1];
      const size_t row = rows * cols > 0 ? x.nbytes() / size_t(rows * cols) : 0;
      const int64_t *i = in[1].data<int64_t>(), *j = in[2].data<int64_t>();
      std::byte* dst = out.mutable_bytes();
      for (int64_t k = 0; k < p.n; ++k) {
        const int64_t r = wrap(i[k], rows, "i", k), c = wrap(j[k], cols, "j", k);
        copy_row(x, r * cols + c, row, dst);
        dst += row;
      }
      return out;
    }
  }
  throw Error("index: unknown mode");
}

}  // namespace parity
