#include "kernels/detect_decode/detect_decode.h"

#include <cmath>

#include "core/error.h"
#include "kernels/op_line.h"

namespace parity {

DetectDecodeParams DetectDecodeParams::parse(std::string_view line) {
  OpLine l(line, kName);
  DetectDecodeParams p;
  p.x = l.shape("x");
  p.stride = l.integer("stride", 0);
  p.anchors = l.real_list("anchors");
  l.finish();
  auto fail = [&](const std::string& what) { throw Error("detect_decode: " + what + " (x=" + p.x.str() + ")"); };
  if (p.x.rank() != 4) fail("x must be [bs, na*no, ny, nx] (rank 4)");
  if (p.stride <= 0) fail("stride must be positive");
  if (p.anchors.empty() || p.anchors.size() % 2) fail("anchors must be w,h pairs");
  for (double a : p.anchors) {
    if (!(a > 0) || !std::isfinite(a)) fail("anchors must be positive");
  }
  if (p.x[1] % p.na() != 0 || p.x[1] / p.na() < 5) {
    fail("channels must be na*no with no >= 5 (x, y, w, h, objectness, classes...) for na=" + std::to_string(p.na()));
  }
  return p;
}

std::string DetectDecodeParams::str() const {
  return OpLineWriter(kName).field("x", x).field("stride", stride).real_list("anchors", anchors).str();
}

}  // namespace parity
