#include "kernels/detect_decode/detect_decode.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "kernels/op_line.h"
#include "kernels/op_traits.h"

namespace parity {

DetectDecodeParams DetectDecodeParams::parse(std::string_view line) { return parse_fields<DetectDecodeParams>(line); }

std::string DetectDecodeParams::str() const { return print_fields(*this); }

void DetectDecodeParams::validate() const {
  auto fail = [&](const std::string& what) { throw Error("detect_decode: " + what + " (x=" + x.str() + ")"); };
  if (x.rank() != 4) fail("x must be [bs, na*no, ny, nx] (rank 4)");
  if (stride <= 0) fail("stride must be positive");
  if (anchors.empty() || anchors.size() % 2) fail("anchors must be w,h pairs");
  for (double a : anchors) {
    if (!(a > 0) || !std::isfinite(a)) fail("anchors must be positive");
  }
  if (x[1] % na() != 0 || x[1] / na() < 5) {
    fail("channels must be na*no with no >= 5 (x, y, w, h, objectness, classes...) for na=" + std::to_string(na()));
  }
}

OpTraits detect_decode_traits() {
  OpTraits t = traits_for<DetectDecodeParams>(unary_op(detect_decode_ref), PARITY_CUDA_OP(unary_op(detect_decode_cuda)));
  t.examples = {"detect_decode x=1x255x8x8 stride=8 anchors=10,13,16,30,33,23"};
  // Raw head outputs over (-6, 6): the sigmoid's useful range.
  t.seed_input = seed_floats(-6, 6);
  // The x, y columns are formed at grid magnitude and scaled by the stride in float32.
  // float32: 32 units of 2^-24 (as measured); a half kernel rounds sigmoid(x) * 2 - 0.5, values up
  // to 2, three times at its own unit before the stride scales them.
  t.extra_atol = [](const Call& call, double u) {
    return std::max(32 * 0x1p-24, 8 * u) * double(call.params<DetectDecodeParams>().stride);
  };
  return t;
}

}  // namespace parity
