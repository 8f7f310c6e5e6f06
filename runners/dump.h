#pragma once
// Dump writer: a folder with one .npy per layer input and output and manifest.json, written
// last and atomically, so a folder without a manifest is an incomplete dump (DESIGN.md).
//
// manifest.json: {"format": "parity-dump", "version": 1, "model", "backend", "device", "seed",
// "tool_version", "layers": [{"index", "name", "op", "params" (the op's canonical line),
// "time_ms", "inputs": [tensor], "outputs": [tensor]}]}; tensor = {"role", "file", "dtype",
// "shape", "source" (the layer output it came from, or null), "hash" ("xxh64:<16 hex>")}.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace parity {

struct DumpInfo {
  std::string model, backend, device;
  uint64_t seed = 0;
};

// An input whose source is an output already in the dump is not written again: its entry
// points at that output's file.
struct DumpTensor {
  std::string role;    // "x", "w", "out0" ...
  std::string source;  // "<layer name>:out<k>" that produced it, empty when none
  Tensor tensor;
};

class DumpWriter {
 public:
  // Creates `dir`; refuses a non-empty one unless `force` (then its old manifest goes first,
  // so the folder never looks complete while it is rewritten).
  DumpWriter(std::string dir, DumpInfo info, bool force);

  void add_layer(const std::string& name, const std::string& line, double time_ms, const std::vector<DumpTensor>& inputs,
                 const std::vector<DumpTensor>& outputs);
  void finish();  // writes manifest.json
  const std::string& dir() const { return dir_; }
  int64_t bytes_written() const { return bytes_; }

 private:
  std::string write_tensor(const std::string& stem, const DumpTensor& t);

  std::string dir_;
  DumpInfo info_;
  std::string layers_json_;  // accumulated, comma-separated layer objects
  int64_t count_ = 0, bytes_ = 0;
  // "<layer>:out<k>" -> (file, content hash): an input naming it as source reuses the file only
  // when its content is the same (a slice of an output is written on its own).
  std::map<std::string, std::pair<std::string, std::string>> output_files_;
};

// "xxh64:<16 hex digits>" of the tensor's bytes.
std::string content_hash(const Tensor& t);

}  // namespace parity
