#pragma once
// Seeded inputs for a case, shaped to make sense for its op: conv weights at PyTorch's default
// init scale, activations around the ranges YOLOv5 sees, valid x1y1x2y2 boxes with scores in
// (0, 1), masks of the case's density, indices in range. Tensor k of a case is drawn from
// RngStream(seed, case line, k): the same case and seed give the same bits everywhere.
#include <cstdint>
#include <string>
#include <vector>

#include "cases/case_file.h"
#include "compare/dump_reader.h"
#include "core/tensor.h"

namespace parity {

std::vector<Tensor> seeded_inputs(const Case& c, uint64_t seed);

// Inputs read from DIR/<case name>.<input name>.npy (e.g. model.0.conv.x.npy), checked against
// the case's input specs. Throws parity::Error naming the missing or mismatching file.
std::vector<Tensor> inputs_from_folder(const Case& c, const std::string& dir);

// Inputs from a dump (a folder with manifest.json, read once by read_dump): the layer named as
// the case that runs the same call, or null with `why_not` set (the dump has no such layer: a
// post-processing case whose shapes depend on the data, or a dump of another model or size).
const DumpLayer* dump_layer_for(const Case& c, const Dump& d, std::string& why_not);
// That layer's input tensors by role, each checked against its recorded hash as compare checks
// it. Throws parity::Error naming the dump when a role is missing or a file is damaged.
std::vector<Tensor> inputs_from_dump(const Case& c, const Dump& d, const DumpLayer& l);

}  // namespace parity
