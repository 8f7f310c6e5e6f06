#pragma once
// Layers one dump has and the other lacks, that the comparison accounts for before any pair is
// judged (docs/DESIGN.md, "Comparing"): a cast to the run's reduced precision (`.half()` of the
// image, `.float()` after a head), and a value one run computes that the other took from a cache
// or as data given (a grid a warm-up cached, a scale MultiScaleRoIAlign works out once). A pair's
// inputs are followed through such casts, and a pair fed by such a value is not rewired.
#include <cstdint>
#include <map>
#include <string>

#include "compare/layer_alignment.h"
#include "compare/precision.h"

namespace parity {

struct OneSidedExcuses {
  std::map<int64_t, std::string> casts[2];       // by side and layer index: why the cast is the run's precision
  std::map<int64_t, std::string> recomputed[2];  // by side and layer index: where what it gives is used

  // An input seen through the casts its side alone has: the entry whose source (a layer, or
  // none for data given) its values come from.
  const DumpTensorInfo& through_casts(const DumpPair& p, int side, const DumpTensorInfo& t) const;
  // Whether layer i of `side` is a value recomputed_as_used excused.
  bool recomputed_here(int side, int64_t i) const { return i >= 0 && recomputed[side].count(i) > 0; }
};

OneSidedExcuses excuse_one_sided(const DumpPair& p, Precision precision);

// Whether tensor t of `side` and tensor u of the other side hold the same values: the same bytes,
// or floats within copy_tolerance (compare/tolerance.h).
bool same_values(const DumpPair& p, int side, const DumpTensorInfo& t, const DumpTensorInfo& u, Precision precision);

// A float32 or float16 tensor entry (what a reduced-precision run writes).
bool narrow_float(const DumpTensorInfo& t);

}  // namespace parity
