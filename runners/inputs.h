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
#include "kernels/call.h"

namespace parity {

std::vector<Tensor> seeded_inputs(const Case& c, uint64_t seed);
// The same with the case's call already read: the same bits.
std::vector<Tensor> seeded_inputs(const Case& c, const Call& call, uint64_t seed);

// The functions below take the case's call read once (Call(c.line)) and its name.

// Inputs read from DIR/<case name>.<input name>.npy (e.g. model.0.conv.x.npy), checked against
// the call's input specs. Throws parity::Error naming the missing or mismatching file.
std::vector<Tensor> inputs_from_folder(const std::string& name, const Call& call, const std::string& dir);

// Inputs from a dump (a folder with manifest.json, read once by read_dump): the layer `name` that
// runs the same call, or null with `why_not` set (the dump has no such layer: a post-processing
// case whose shapes depend on the data, or a dump of another model or size).
const DumpLayer* dump_layer_for(const std::string& name, const Call& call, const Dump& d, std::string& why_not);
// That layer's input tensors by role, each checked against its recorded hash as compare checks
// it. Throws parity::Error naming the dump when a role is missing or a file is damaged.
std::vector<Tensor> inputs_from_dump(const Call& call, const Dump& d, const DumpLayer& l);

}  // namespace parity
