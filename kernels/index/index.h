#pragma once
// index: the three kinds of tensor indexing YOLOv5's post-processing uses, with torch's
// semantics. Indices may be negative (counted from the end, as Python's); an index outside
// [-size, size) is a parity::Error naming it, never undefined behaviour.
//   mask:   x[mask], mask (bool) covering the leading dims of x    -> [count, x.shape[k:]...]
//           YOLOv5: x = x[xc[xi]]
//   select: x[idx] along dim (index_select with Python's negatives) -> x.shape with dim = N
//           YOLOv5: x[i], output[xi] = x[i]
//   pairs:  x[i, j], i and j int64 [N]                               -> [N, x.shape[2:]...]
//           YOLOv5: iou[x[0], x[1]], x[i, 5 + j]
// Line: index x=SHAPE mask=SHAPE [dtype=D] | index x=SHAPE idx=N [dim=D] [dtype=D]
//       | index x=SHAPE pairs=N [dtype=D]
#include <string>
#include <string_view>
#include <vector>

#include "kernels/backend.h"

namespace parity {

struct IndexParams {
  static constexpr const char* kName = "index";
  enum class Mode { Mask, Select, Pairs };
  Mode mode = Mode::Mask;
  Shape x;
  DType dtype = DType::Float32;
  Shape mask;       // Mask
  int64_t n = 0;    // Select, Pairs: number of indices
  int64_t dim = 0;  // Select

  static IndexParams parse(std::string_view line);  // validates
  std::string str() const;
  std::vector<TensorSpec> inputs() const;  // x, then mask | idx | i, j
  // For Mask the leading dim is the mask's count, known only from its data.
  Shape output_shape(int64_t mask_count = 0) const;
  int64_t resolved_dim() const { return dim < 0 ? dim + int64_t(x.rank()) : dim; }
};

// inputs as IndexParams::inputs() lists them.
Tensor index_ref(const IndexParams& p, const std::vector<Tensor>& in);
Tensor index_aten(const IndexParams& p, const std::vector<Tensor>& in);
// The project's CUDA kernel (<op>_cuda.cu; built with nvcc, runs where a GPU is present).
Tensor index_cuda(const IndexParams& p, const std::vector<Tensor>& in);

OpFn index_op(decltype(&index_ref) fn);

struct OpTraits;
OpTraits index_traits();

}  // namespace parity
