#pragma once
// Golden packs: checked-in inputs and expected outputs that every backend must reproduce, like
// MegEngine's dump_with_testcase but as plain .npy files and a manifest. A pack is a dump folder
// (runners/dump.h) plus golden.json: what the pack holds, the tolerance (the compare policy)
// and, per layer, the provenance of its expected outputs.
//
// Packs (`parity golden update` writes them under golden/):
//   conv2d, silu, cat, nonzero, index, nms: each op on small YOLOv5-derived shapes (scaled
//     down, with tails); expected outputs from LibTorch in float64 (conv2d, silu: inputs
//     widened exactly, result rounded once to float32) or, where float64 changes nothing or
//     the op is defined in float32 (data movement, nms's float32 IoU), from the reference.
//   yolov5n_128: yolov5n v7.0 at 128x128, batch 1, seeded, every layer's inputs and output
//     from the reference.
// Checking runs each layer of each pack on a backend from the pack's own inputs and compares
// its outputs with the expected ones through the judge (compare/judge.h), as compare does.
#include <string>
#include <vector>

#include "compare/tensor_compare.h"

namespace parity {

struct GoldenLayerResult {
  std::string pack, layer, line;
  State state = State::Passed;
  bool explained = false, structural = false;
  std::string reason;
  double max_abs = 0;
};

// The packs under `root`, sorted by name. Throws parity::Error when a pack folder lacks its
// manifest or golden.json, or when an update was interrupted while swapping packs in.
std::vector<std::string> golden_packs(const std::string& root);

// Runs every layer of pack `dir` on `backend_name`. Throws parity::Error for a bad pack.
std::vector<GoldenLayerResult> check_golden_pack(const std::string& dir, const std::string& backend_name);

// Writes every pack into `root` (a fresh folder).
void write_golden_packs(const std::string& root);

// Replacing the packs under `root` with those in `fresh` (its sub-folder) survives a kill at any
// point: a journal (<root>/.swap, written atomically) lists the packs first; each old pack then
// moves to <root>/.previous and the new one into its place; the journal goes last. While the
// journal exists, golden_packs refuses the folder, and finish_golden_swap completes the swap.
void swap_in_golden_packs(const std::string& root, const std::string& fresh);

// Completes a swap a killed update left (see above); false when there was none.
bool finish_golden_swap(const std::string& root, const std::string& fresh);

}  // namespace parity
