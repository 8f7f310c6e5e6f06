#include "kernels/threshold/threshold.h"

#include "kernels/op_line.h"

namespace parity {

ThresholdParams ThresholdParams::parse(std::string_view line) {
  OpLine l(line, kName);
  ThresholdParams p;
  p.x = l.shape("x");
  p.value = l.real("value");
  l.finish();
  return p;
}

std::string ThresholdParams::str() const { return OpLineWriter(kName).field("x", x).real("value", value).str(); }

}  // namespace parity
