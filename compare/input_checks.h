#pragma once
// What a paired layer's inputs are and where they come from, on each side (docs/DESIGN.md,
// "Comparing"): data no layer produced that differs, an input read from another layer on one
// side (the wiring), an input that is not its producer's output through its recorded views and
// copies (a wrong copy kernel, a value written between two layers). Each side may match the
// judge on its own inputs, so only these show such a defect.
#include <string>
#include <vector>

#include "compare/data_flow.h"
#include "compare/layer_alignment.h"
#include "compare/one_sided.h"

namespace parity {

class InputChecks {
 public:
  // `runs`: A's and B's own precisions where the dumps record them (--precision auto).
  InputChecks(const DumpPair& p, const OneSidedExcuses& excuses, Precision precision, const std::optional<Precision> (&runs)[2])
      : p_(p), excuses_(excuses), precision_(precision), runs_{runs[0], runs[1]} {}

  // An input that no layer produced (the image, a weight) is data the two runs were given: when
  // it differs, that is a finding of its own, whatever the layer computed. Seen through one
  // side's excused casts: the image a `.half()` rounded is the image given. Under a reduced
  // precision, one side the other's value rounded to it is that precision, not a finding: its
  // role goes into `rounded`; so are two runs of two half types (float16 against bfloat16) that
  // took one value each rounded to its own type.
  std::string given_input_difference(const DumpLayer& la, const DumpLayer& lb, std::vector<std::string>& rounded) const;
  // An input read from another layer on one side than on the other (a cat fed in swapped order,
  // a residual taken from the wrong block): both producers are in both dumps, paired, and differ.
  std::string rewired_input(const DumpLayer& la, const DumpLayer& lb) const;
  // An input taken from the same producer on both sides through views or copies that take other
  // elements, or, where no chain was recorded, an input that differs though its producer agrees
  // (`flow` says which producers differ).
  std::string inconsistent_input(const DumpLayer& la, const DumpLayer& lb, const DataFlow& flow) const;
  // A side's input that is not what its recorded views and copies make of that side's own
  // producer output; "" when every such input of layer `l` of `side` holds.
  std::string copy_finding(int side, const DumpLayer& l) const;
  // Both sides ran on the same input bytes, so the judge runs once.
  bool same_input_bytes(const DumpLayer& la, const DumpLayer& lb) const;

 private:
  bool rounded_by_precision(const DumpTensorInfo& ta, const DumpTensorInfo& tb, Precision precision) const;

  const DumpPair& p_;
  const OneSidedExcuses& excuses_;
  Precision precision_;
  std::optional<Precision> runs_[2];
};

}  // namespace parity
