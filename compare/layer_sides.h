#pragma once
// A dump layer's two sides as the judge takes them (compare/judge.h LayerSide): which outputs are
// streamed, mapped or read whole, and how the inputs are reached.
#include <utility>

#include "compare/dump_reader.h"
#include "compare/judge.h"

namespace parity {

// The sides of a dump layer as the judge takes them: outputs loaded (bytes verified, hashes
// computed from them), inputs loaded on demand, none when the dump did not record them.
LayerSide layer_side(const Dump& d, const DumpLayer& l);
// The type a layer's kernel computed in, at least: the half type its outputs record they were held
// in before the dump wrote them wider (`cast_from`), fp32 where none does.
Precision computed_in(const DumpLayer& l);
// The two sides of a paired layer, read as a comparison reads them: outputs whose bytes differ
// streamed by the judge (`stream`: the element-wise pass; floats of one dtype and shape) or read
// whole, the same bytes only mapped (the mistrust scan reads few of them); inputs on demand,
// mapped in the element-wise pass, read whole for a local check.
std::pair<LayerSide, LayerSide> layer_sides(const Dump& a, const DumpLayer& la, const Dump& b, const DumpLayer& lb, bool stream);

}  // namespace parity
