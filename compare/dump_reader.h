#pragma once
// Reading a dump (runners/dump.h): manifest.json and the .npy files it lists. A folder without
// a manifest is an incomplete dump and is refused; so is a manifest naming a missing file. The
// manifest's fields, their defaults and the checks made on reading: docs/MANIFEST.md.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/npy.h"
#include "core/tensor.h"
#include "compare/view_chain.h"
#include "kernels/call.h"

namespace parity {

// How output k is named where nothing else names it: "out0", "out1", ...; with `roles`, its
// recorded role where there is one.
std::string output_role(size_t k);
std::string output_role(const std::vector<std::string>& roles, size_t k);

struct DumpTensorInfo {
  std::string role, file, dtype, source, hash;  // hash: as recorded, empty when none (Dump::hash_of)
  std::vector<int64_t> shape;
  // An input's producer: the most recent earlier layer named as in `source` ("<layer>:<role>")
  // that has that output, as an index into Dump::layers; -1 when none is in the dump.
  int64_t source_layer = -1;
  // Other outputs ("<layer>:<role>") the input may hold values of, where a partial in-place write
  // by the source into its storage did not reach (y[:, :3].add_(1) after y.clamp_()), and their
  // layers (as source_layer; -1 for one not in the dump).
  std::vector<std::string> also_from;
  std::vector<int64_t> also_from_layers;
  bool derived = false;  // computed from the source output (a slice, a column), not it as is
  std::vector<ViaStep> via;  // how, where recorded: the views and copies from the source output
  bool has_via = false;      // a chain was recorded, empty or not (empty: the output itself, written since by no recorded call)
  bool to_python = false;    // an output the run read as Python numbers (.item(), float(t))
  bool strided = false;      // an input the call read as a non-contiguous tensor (its file holds it contiguous)
  std::string cast_from;     // an output the run held in float16 or bfloat16, written wider; empty otherwise
};

struct DumpLayer {
  int64_t index = 0;
  int64_t occurrence = 0;  // 0 for the first layer of its name, 1 for the second...: pairs layers
  std::string name, op, line;  // line: the op line, as the manifest's `params` field gives it
  std::shared_ptr<const Call> call;  // `line` read once, when the manifest is: null for an op parity does not know
  double time_ms = 0;
  // Under autocast, the type the ATen kernels inside the call met: "float32" (none met a half
  // tensor or may have run in TF32), "tf32", "float16" or "bfloat16"; empty where the recording
  // did not watch (parity_torch's kernel_types.py).
  std::string kernels_in;
  std::vector<DumpTensorInfo> inputs, outputs;

  // The input of this role; null when there is none.
  const DumpTensorInfo* input_named(const std::string& role) const {
    for (const DumpTensorInfo& t : inputs) {
      if (t.role == role) return &t;
    }
    return nullptr;
  }
};

struct Dump {
  std::string dir, model, backend, device, tool_version;
  std::optional<uint64_t> seed;  // none when the manifest records none (parity_torch's dumps)
  // What the dump was computed from (runners/dump.h DumpRun), values as text; empty for a
  // manifest written before "run" existed.
  std::map<std::string, std::string> run;
  std::vector<DumpLayer> layers;

  // Reads one tensor of the dump; checks dtype and shape against the manifest, and its bytes
  // against the hash the manifest records (corrupt dump), hashing them as they are read unless
  // the file was hashed before. Throws parity::Error naming the file.
  Tensor load(const DumpTensorInfo& t) const;
  // The same tensor as a read-only mapping, its bytes hashed and checked first: for a caller that
  // reads few of its elements, or none.
  // `populate`: every page mapped at once, for a caller that reads all over it.
  Tensor view(const DumpTensorInfo& t, bool populate = false) const;
  // The tensor mapped, dtype and shape checked, its bytes neither read nor checked: for a caller
  // that streams them through the mapping and hands their hash to check_hash.
  Tensor unchecked_view(const DumpTensorInfo& t) const;
  // view(t, populate) with the check of its bytes owed, not made first: check_owed() makes it,
  // by then usually against the hash of a stream of the same file (an input is an earlier
  // layer's output), so the file is not read once more for it. For a caller that reads some
  // elements, or none, and reports nothing computed from them before check_owed() returns.
  Tensor view_checked_later(const DumpTensorInfo& t, bool populate) const;
  // The check of the tensor's bytes against its record, owed: made by check_owed().
  void check_later(const DumpTensorInfo& t) const;
  // Checks every tensor view_checked_later gave or check_later was given (hashing a file not
  // hashed since); throws on the first that is corrupt.
  void check_owed() const;
  // The hash of a tensor's bytes as the caller read them: checked against the manifest's record
  // (a mismatch throws: the dump is corrupt) and kept as the file's hash.
  void check_hash(const DumpTensorInfo& t, const std::string& hash) const;
  // Whether the manifest records the tensor's hash by an older algorithm (xxh64), which is
  // checked on the whole tensor.
  static bool legacy_hash(const DumpTensorInfo& t);
  // The hash of the tensor's bytes as read (checked as load does): two tensors have the same
  // content when their hash_of agree, whatever their manifests claim. Each file is hashed once.
  std::string hash_of(const DumpTensorInfo& t) const;
  // The output an input of one of its layers names as its source; null when none is in the dump.
  const DumpTensorInfo* source_of(const DumpTensorInfo& input) const;

 private:
  // content_hash of the file's bytes, checked against the hash the manifest records.
  std::string verified_hash(const std::string& path, const DumpTensorInfo& t) const;
  const std::string* known_hash(const std::string& path) const;  // null when not hashed yet
  // The tensor as read_npy gives it (mapped from NpyReadOptions' size, or `at_any_size`), its
  // dtype and shape checked against the entry.
  Tensor mapped(const DumpTensorInfo& t, bool populate, bool at_any_size = false) const;
  const std::string& remember(const std::string& path, std::string hash) const;

  // File path -> hash of its bytes, shared by copies of the Dump and by threads loading at once.
  struct VerifiedFiles {
    std::mutex mutex;
    std::map<std::string, std::string> hashes;
    std::vector<DumpTensorInfo> owed;  // given by view_checked_later or check_later, not checked yet
  };
  std::shared_ptr<VerifiedFiles> verified_ = std::make_shared<VerifiedFiles>();
};

// Throws parity::Error naming the folder or file: no manifest (incomplete dump), malformed
// manifest, unknown format or version, a listed file missing, truncated, or not holding the
// dtype and shape the manifest gives (only headers are read here; data is read by load). A
// tensor without "dtype" or "shape" takes them from its file's header.
Dump read_dump(const std::string& dir);

// A plain name of a file or folder inside another: not empty, no '/', no NUL, not starting with
// '.' (so never "..", and never a hidden scratch file). Manifests name their tensors so; golden's
// swap journal names its packs so.
bool is_plain_name(std::string_view name);

// The header of a tensor file the manifest lists, by its name in the dump folder.
using TensorHeaders = std::function<NpyHeaderInfo(const std::string& file)>;

// The manifest's content (compare/manifest.cpp): `manifest` names it in errors and its folder
// becomes Dump::dir. File names must be plain names inside the dump folder. Each listed dtype
// and shape is checked against `headers`, and one not listed is taken from it; without
// `headers` no file is opened and a tensor must list both. Every error is one line naming the
// layer (its position in "layers", and its name) and the field.
Dump parse_manifest(std::string_view text, const std::string& manifest, const TensorHeaders& headers = nullptr);

}  // namespace parity
