#pragma once
// A layer's outputs as the judge reads them (compare/judge.h): two tensors of different float
// dtypes widened to float64, a pair compared piece by piece where each lies (a stored output is
// read in place, hashed as it passes), and the elements the precision figures read kept.
#include <memory>
#include <string>
#include <vector>

#include "compare/judge.h"
#include "compare/precision.h"
#include "compare/tensor_compare.h"

namespace parity {

// Two float tensors of different dtypes compare in float64, under the narrower one's tolerance.
struct Comparable {
  Tensor x, y;
  DType dtype;  // the dtype whose tolerance applies
};
Comparable comparable(const Tensor& x, const Tensor& y);

// Where a streamed tensor's pieces come from: a stored output (read where it lies, hashed as it
// passes) or a tensor in memory.
struct PieceSource {
  const StoredOutput* stored;
  const Tensor* memory;
};

struct StreamedPair {
  TensorDiff diff;
  std::string hash_a, hash_b;  // of the bytes read from a stored side, to be checked by the caller
  std::shared_ptr<std::vector<double>> kept_a, kept_b;  // the values of the elements asked for
};

// Two float tensors of one dtype and shape compared piece by piece (TensorCompareStream: the
// figures of compare_tensors, to the bit), neither held whole unless it is in memory already.
// The elements listed in `keep` (ascending) are kept, as precision_stats reads them.
StreamedPair stream_pair(DType dtype, const Shape& shape, const Tolerance& tol, const std::vector<int64_t>& keep, PieceSource a,
                         PieceSource b);

// The elements precision_stats reads of output k (a dot product's samples need the inputs; when
// they do not fit the call, none: the figures are then left out where they are computed).
std::vector<int64_t> sampled_elements(const Call* call, size_t k, const Shape& shape, const std::vector<Tensor>& in);

// `tol` with, per element, `by` (float64, one value per element: what rounding the inputs moves
// the result by) added to its bound.
void widen(Tolerance& tol, Tensor by);

// Values by flat index of the elements a streamed comparison kept; asking for another is a bug.
ElementValues kept_values(std::shared_ptr<const std::vector<int64_t>> keep, std::shared_ptr<std::vector<double>> values,
                          const std::string& layer);

// Whether output k of side s is stored (StoredOutput), to be streamed.
inline bool is_stored(const LayerSide& s, size_t k) { return k < s.stored.size() && s.stored[k].read; }
// Output k whole: loaded from where it is stored (checked), or as the side holds it.
inline Tensor whole_output(const LayerSide& s, size_t k) { return is_stored(s, k) ? s.stored[k].load() : s.outputs[k]; }

}  // namespace parity
