#include "kernels/argsort/argsort.h"

#include "core/error.h"
#include "kernels/op_line.h"

namespace parity {

ArgsortParams ArgsortParams::parse(std::string_view line) {
  OpLine l(line, kName);
  ArgsortParams p;
  p.x = l.shape("x");
  p.descending = l.flag("descending");
  l.finish();
  if (p.x.rank() != 1) throw Error("argsort: x must be 1-D (x=" + p.x.str() + ")");
  return p;
}

std::string ArgsortParams::str() const { return OpLineWriter(kName).field("x", x).flag("descending", descending).str(); }

}  // namespace parity
