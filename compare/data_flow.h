#pragma once
// What each layer hands the layers downstream of it in a comparison, walked in execution order
// (docs/DESIGN.md, "Comparing"): whether its outputs differ between A and B, the first origin
// they carry, and whether they steer control flow (a count, an index, a mask, a shape), after
// which layers may run on one side only, or with other input shapes.
#include <cstdint>
#include <string>
#include <vector>

#include "compare/layer_alignment.h"

namespace parity {

class DataFlow {
 public:
  explicit DataFlow(const DumpPair& p);

  // The first origin (its id) upstream of layer i of `side` in the dataflow, through its inputs'
  // sources; an input whose producer is not in the dump, or a layer without recorded inputs, may
  // follow any earlier origin. -1 when none.
  int64_t upstream(int side, int64_t i) const;
  // An input of layer i of `side` that comes from a layer whose outputs steer, or from one
  // downstream of such a layer: once control flow has followed the data (detections in another
  // order, another count of boxes), the Python numbers taken from it (a box's size) shape the
  // calls after it too. Its source, "" when none.
  std::string steering_source(int side, int64_t i) const;
  // An input of layer i of `side` that comes straight from a layer whose outputs steer.
  std::string steered_input(int side, int64_t i) const;
  // Whether layer i of `side` was recorded as differing between A and B.
  bool differs(int side, int64_t i) const { return differs_[side][size_t(i)] != 0; }
  // Whether a layer recorded so far (on either side) steers: the two runs' data have parted in a
  // way control flow follows (an index, a count, a box's integer corner).
  bool steered_so_far() const { return steered_so_far_; }
  // Whether x on A and y on B are one value each run read into Python numbers: the same element
  // of the k-th output each read (`x / x.abs().amax().item()`: the 1.515625 in the div's line), as
  // it is or as the dump wrote it (float32): numbers the runs' data gave, not their code.
  bool same_read(double x, double y) const;
  // Whether texts a and b (a view's chain, a line without its tensors' shapes) differ only in
  // numbers, each pair that differs read into Python by the two runs as one value: the same
  // element of the k-th output each run read (a crop at int(t) or t.item() on each side,
  // `x[int(y0):6]`), not the model code.
  bool numbers_read_into_python(const std::string& a, const std::string& b) const;

  // What the layers downstream read of layer i of `side`: whether it differs, the origin it
  // carries (or -1), whether its outputs steer what follows.
  void record(int side, int64_t i, bool differs, int64_t origin, bool steers);
  // A new origin, numbered in the order found (the first is 0).
  int64_t add_origin(const std::string& name);
  const std::string& origin_name(int64_t id) const { return origin_names_.at(size_t(id)); }

 private:
  std::string input_from(int side, int64_t i, const std::vector<char> (&marked)[2]) const;

  const DumpPair& p_;
  std::vector<int64_t> up_[2];        // per side and layer: the first origin upstream, or -1
  std::vector<char> differs_[2];      // its outputs differ between A and B
  // Its outputs differ in a way control flow follows; rounding differences in float values never steer.
  std::vector<char> steers_[2];
  std::vector<char> after_steering_[2];  // steers_, or downstream of a layer that does
  std::vector<std::string> origin_names_;
  bool steered_so_far_ = false;
  // Per side: the outputs read into Python recorded so far (small ones), in the order read; those
  // loaded (only when a number is first asked about), their values in that order.
  void load_reads(int side) const;
  std::vector<const DumpTensorInfo*> reads_[2];
  mutable std::vector<std::vector<double>> read_in_order_[2];
};

}  // namespace parity
