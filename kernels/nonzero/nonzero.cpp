#include "kernels/nonzero/nonzero.h"

#include "kernels/op_line.h"

namespace parity {

NonzeroParams NonzeroParams::parse(std::string_view line) {
  OpLine l(line, kName);
  NonzeroParams p;
  p.x = l.shape("x");
  p.dtype = l.dtype("dtype", DType::Bool);
  l.finish();
  return p;
}

std::string NonzeroParams::str() const {
  OpLineWriter w(kName);
  w.field("x", x);
  if (dtype != DType::Bool) w.field("dtype", dtype_name(dtype));
  return w.str();
}

}  // namespace parity
