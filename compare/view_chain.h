#pragma once
// The views and copies between a producer's output and the input a layer took from it, as the
// manifest's `via` records them (docs/MANIFEST.md), replayed on one side's own producer output.
// That input is then checked against its own side, not against the other side's copy: a wrong
// copy kernel or transpose is named on its side, and two correct runs whose producers differ by
// rounding never fail here.
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace parity {

struct ViaStep {
  std::string op;  // the Python calls that made it, for messages (".permute(0, 2, 3, 1)")
  // A view: the tensor of `shape`/`strides` at `offset` in the storage of the last tensor the
  // chain materialised (of `base_shape`/`base_strides`, at offset 0 of that storage).
  bool view = false;
  std::vector<int64_t> base_shape, base_strides, shape, strides;
  int64_t offset = 0;
  std::string cast;  // a copy cast to this dtype ("bfloat16", "int64"); "" for a copy as is
};

// Whether a step of the chain indexes with a tensor (`m[t0:t1]`, `x[idx]`): which elements it
// takes is the run's data (parity_torch writes such an index as `<tensor>`).
bool indexed_by_data(const std::vector<ViaStep>& steps);

// The chain's calls, for messages: ".permute(0, 2, 3, 1).contiguous()".
std::string via_text(const std::vector<ViaStep>& steps);

struct ViaCheck {
  bool checked = false;  // false: the chain does not fit the producer (why_not says how)
  std::string why_not;
  std::string mismatch;  // "" when the input is what the chain makes of the producer's output
};

// Whether `input` is `producer` through `steps`: exactly, or, past a cast to a narrower float or
// an integer, within one unit of that dtype (a float64 run written as float32 rounds the producer
// once before the cast, the run itself did not).
ViaCheck check_via(const Tensor& producer, const Tensor& input, const std::vector<ViaStep>& steps);

// Where each element the chain gives comes from in a producer output of `shape` (its index in C
// order), casts aside: two runs whose chains read the same elements in the same places ran the
// same model code between the layers, whatever their memory layouts. Empty when the chain does
// not fit that shape.
std::vector<int64_t> via_sources(const std::vector<int64_t>& shape, const std::vector<ViaStep>& steps);

}  // namespace parity
