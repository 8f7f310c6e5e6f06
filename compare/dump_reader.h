#pragma once
// Reading a dump (runners/dump.h): manifest.json and the .npy files it lists. A folder without
// a manifest is an incomplete dump and is refused; so is a manifest naming a missing file.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"

namespace parity {

struct DumpTensorInfo {
  std::string role, file, dtype, source, hash;
  std::vector<int64_t> shape;
};

struct DumpLayer {
  int64_t index = 0;
  std::string name, op, params;
  double time_ms = 0;
  std::vector<DumpTensorInfo> inputs, outputs;
};

struct Dump {
  std::string dir, model, backend, device, tool_version;
  uint64_t seed = 0;
  std::vector<DumpLayer> layers;

  // Memory-maps (or reads, when small) one tensor of the dump; checks dtype and shape against
  // the manifest. Throws parity::Error naming the file.
  Tensor load(const DumpTensorInfo& t) const;
};

// Throws parity::Error naming the folder or file: no manifest (incomplete dump), malformed
// manifest, unknown format or version, a listed file missing, truncated, or not holding the
// dtype and shape the manifest gives (only headers are read here; data is read by load).
Dump read_dump(const std::string& dir);

// A plain name of a file or folder inside another: not empty, no '/', no NUL, not starting with
// '.' (so never "..", and never a hidden scratch file). Manifests name their tensors so; golden's
// swap journal names its packs so.
bool is_plain_name(std::string_view name);

// The manifest's content alone (no file is opened): `manifest` names it in errors and its folder
// becomes Dump::dir. File names must be plain names inside the dump folder.
Dump parse_manifest(std::string_view text, const std::string& manifest);

}  // namespace parity
