#pragma once
// Case files: one op call per line, `#` starts a comment, blank lines are ignored.
//   conv2d x=1x3x640x640 w=32x3x6x6 bias stride=2 pad=2 name=model.0.conv
// A case is an op line (see kernels/op_line.h) plus case fields:
//   name=PATH     the PyTorch module path the call belongs to (default: case<line number>)
//   density=P     the share of true values in seeded bool inputs (masks), default 0.5
//   inferred      a parameter was not recorded and was inferred (trace import)
// Cases print canonically: the op's canonical line, then name, density, inferred.
#include <string>
#include <string_view>
#include <vector>

namespace parity {

struct Case {
  std::string line;  // canonical op line
  std::string name;
  double density = 0.5;
  bool inferred = false;
  std::string where;  // "file:line" it came from, for messages

  std::string str() const;
};

// Throws parity::Error naming `where` and the offending field.
Case parse_case(std::string_view text, const std::string& where = "");
std::vector<Case> read_case_file(const std::string& path);
// Written atomically: `header` lines become `# ` comments at the top.
void write_case_file(const std::string& path, const std::vector<Case>& cases, const std::vector<std::string>& header);

}  // namespace parity
