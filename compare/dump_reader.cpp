#include "compare/dump_reader.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string_view>

#include "core/error.h"
#include "core/hash.h"
#include "core/host_memory.h"
#include "core/npy.h"
#include "core/regular_file.h"
#include "core/thread_pool.h"

namespace parity {

std::string output_role(size_t k) { return "out" + std::to_string(k); }
std::string output_role(const std::vector<std::string>& roles, size_t k) { return k < roles.size() ? roles[k] : output_role(k); }

namespace fs = std::filesystem;

namespace {
// A tensor file's content against its manifest entry (checked on opening the dump, and again on
// loading, since the file may have changed in between).
void check_as_listed(const std::string& path, DType dtype, const Shape& shape, const DumpTensorInfo& t) {
  if (std::string(dtype_name(dtype)) != t.dtype || shape.dims() != t.shape) {
    throw Error("holds " + std::string(dtype_name(dtype)) + " " + shape.str() + ", the manifest says " + t.dtype + " " +
                Shape(t.shape).str())
        .file(path);
  }
}

// `read` is the hash of the bytes as read, by the algorithm the manifest's hash names.
void check_recorded(const std::string& path, const DumpTensorInfo& t, const std::string& read) {
  if (!t.hash.empty() && read != t.hash) {
    throw Error("bytes do not match the hash the manifest records (" + t.hash + " recorded, " + read + " read): the dump is corrupt")
        .file(path);
  }
}

// A manifest is a few MB for a thousand layers; this is far above any real one and far below
// what reading /dev/zero-sized input would cost.
constexpr size_t kMaxManifestBytes = size_t(256) << 20;

// `file` of the dump folder `dir` does not lead out of it: a link is followed to where it points,
// which must be inside the folder too (the folder's own path may hold links: compared resolved).
void check_inside(const std::string& dir, const std::string& file) {
  const fs::path path = fs::path(dir) / file;
  std::error_code ec;
  if (!fs::is_symlink(fs::symlink_status(path, ec))) return;
  const fs::path target = fs::weakly_canonical(path, ec);
  if (ec) throw Error("cannot resolve the link: " + ec.message()).file(path.string());
  const fs::path root = fs::weakly_canonical(dir, ec);
  if (ec) throw Error("cannot resolve the dump folder: " + ec.message()).file(dir);
  std::string t = target.string(), r = root.string();
  if (r.empty() || r.back() != '/') r += '/';
  if (t.compare(0, r.size(), r) != 0) throw Error("is a link leading out of the dump folder (to " + t + ")").file(path.string());
}

}  // namespace

bool is_plain_name(std::string_view name) {
  return !name.empty() && name[0] != '.' && name.find('/') == std::string_view::npos && name.find('\0') == std::string_view::npos;
}

bool Dump::legacy_hash(const DumpTensorInfo& t) { return !t.hash.empty() && t.hash.rfind("xxh3:", 0) != 0; }

// Read whole, not mapped (core/npy.h says why), and hashed piece by piece as it is read. Mapped
// after hashing where the kernel grants no huge pages (core/host_memory.h says why), or where the
// manifest records an older hash, which is checked on the whole tensor.
Tensor Dump::load(const DumpTensorInfo& t) const {
  const std::string path = dir + "/" + t.file;
  if (!huge_pages_on_request() || legacy_hash(t)) return view(t);
  if (const std::string* h = known_hash(path)) {
    check_recorded(path, t, *h);  // this entry's record too: two entries may list one file
    Tensor x = read_npy_whole(path);
    check_as_listed(path, x.dtype(), x.shape(), t);
    return x;
  }
  ContentHasher hasher;
  Tensor x = read_npy_whole(path, [&](const std::byte* p, size_t n) { hasher.update(p, n); });
  check_as_listed(path, x.dtype(), x.shape(), t);
  std::string h = hasher.digest();
  check_recorded(path, t, h);
  remember(path, std::move(h));
  return x;
}

Tensor Dump::view(const DumpTensorInfo& t, bool populate) const {
  verified_hash(dir + "/" + t.file, t);
  return mapped(t, populate);
}

Tensor Dump::view_checked_later(const DumpTensorInfo& t, bool populate) const {
  if (legacy_hash(t)) return view(t, populate);  // checked on the whole tensor, now
  check_later(t);
  return mapped(t, populate);
}

void Dump::check_later(const DumpTensorInfo& t) const {
  const std::lock_guard<std::mutex> lock(verified_->mutex);
  verified_->owed.push_back(t);
}

void Dump::check_owed() const {
  std::vector<DumpTensorInfo> owed;
  {
    const std::lock_guard<std::mutex> lock(verified_->mutex);
    owed.swap(verified_->owed);
  }
  // The files not hashed yet (an image given to the run, a slice an input was cut from) are
  // hashed on the threads available, then every entry is checked against its file's hash, in
  // order: the first corrupt entry is the one reported, whatever the thread count.
  std::vector<const DumpTensorInfo*> unhashed;
  std::set<std::string> seen;
  for (const DumpTensorInfo& t : owed) {
    const std::string path = dir + "/" + t.file;
    if (!legacy_hash(t) && !known_hash(path) && seen.insert(path).second) unhashed.push_back(&t);
  }
  parallel_for(int64_t(unhashed.size()), 1, [&](int64_t lo, int64_t hi) {
    for (int64_t k = lo; k < hi; ++k) {
      try {
        verified_hash(dir + "/" + unhashed[size_t(k)]->file, *unhashed[size_t(k)]);
      } catch (const Error&) {
        // Reported below, in the entries' order.
      }
    }
  });
  for (const DumpTensorInfo& t : owed) verified_hash(dir + "/" + t.file, t);
}

// Mapped at any size: the caller streams its bytes through the mapping, hashing them as they pass.
Tensor Dump::unchecked_view(const DumpTensorInfo& t) const { return mapped(t, false, true); }

Tensor Dump::mapped(const DumpTensorInfo& t, bool populate, bool at_any_size) const {
  const std::string path = dir + "/" + t.file;
  NpyReadOptions options;
  options.populate = populate;
  if (at_any_size) options.map_threshold = 0;
  Tensor x = read_npy(path, options);
  check_as_listed(path, x.dtype(), x.shape(), t);
  return x;
}

void Dump::check_hash(const DumpTensorInfo& t, const std::string& hash) const {
  const std::string path = dir + "/" + t.file;
  check_recorded(path, t, hash);
  remember(path, hash);
}

std::string Dump::hash_of(const DumpTensorInfo& t) const { return verified_hash(dir + "/" + t.file, t); }

const DumpTensorInfo* Dump::source_of(const DumpTensorInfo& input) const {
  if (input.source_layer < 0 || size_t(input.source_layer) >= layers.size()) return nullptr;
  const std::string role = input.source.substr(input.source.rfind(':') + 1);
  const std::vector<DumpTensorInfo>& outs = layers[size_t(input.source_layer)].outputs;
  const auto out = std::find_if(outs.begin(), outs.end(), [&](const DumpTensorInfo& o) { return o.role == role; });
  return out == outs.end() ? nullptr : &*out;
}

const std::string* Dump::known_hash(const std::string& path) const {
  const std::lock_guard<std::mutex> lock(verified_->mutex);
  const auto it = verified_->hashes.find(path);
  return it == verified_->hashes.end() ? nullptr : &it->second;  // entries are never erased
}

const std::string& Dump::remember(const std::string& path, std::string hash) const {
  const std::lock_guard<std::mutex> lock(verified_->mutex);
  return verified_->hashes.emplace(path, std::move(hash)).first->second;
}

// Each file is hashed once (an input reusing an earlier output's file is not hashed again), and
// every entry's record is checked against that hash. Two threads meeting the same new file may
// both hash it, which costs time only.
std::string Dump::verified_hash(const std::string& path, const DumpTensorInfo& t) const {
  const std::string* known = known_hash(path);
  if (known && !legacy_hash(t)) {
    // Hashed before, maybe for another entry listing the same file (an output that is also a
    // later layer's input): this entry's record is checked against it as well.
    check_recorded(path, t, *known);
    return *known;
  }
  if (legacy_hash(t)) {
    const Tensor x = read_npy(path);  // an older algorithm: checked on the whole tensor
    check_as_listed(path, x.dtype(), x.shape(), t);
    check_recorded(path, t, content_hash_like(t.hash, x));
    return remember(path, content_hash(x));
  }
  ContentHasher hasher;
  const NpyHeaderInfo header = stream_npy_data(path, [&](const std::byte* p, size_t n) { hasher.update(p, n); });
  check_as_listed(path, header.dtype, header.shape, t);
  std::string h = hasher.digest();
  check_recorded(path, t, h);
  return remember(path, std::move(h));
}

Dump read_dump(const std::string& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) throw Error("does not exist").file(dir);
  if (!fs::is_directory(dir, ec)) throw Error("not a folder: a dump is a folder holding manifest.json").file(dir);
  const std::string manifest = dir + "/manifest.json";
  if (!fs::exists(manifest, ec)) throw Error("no manifest.json: an incomplete dump (interrupted, or still being written)").file(dir);
  check_inside(dir, "manifest.json");
  const std::string text = read_regular_file(manifest, kMaxManifestBytes);
  // Every listed file present, whole, and as described: a dump that passes this never fails a
  // compare half way for a file, and hash-identical tensors (never read) are still checked.
  std::map<std::string, NpyHeaderInfo> headers;
  const TensorHeaders header_of = [&](const std::string& file) {
    if (const auto it = headers.find(file); it != headers.end()) return it->second;
    const std::string path = dir + "/" + file;
    std::error_code missing;
    if (!fs::exists(path, missing)) throw Error("the manifest lists a missing file").file(path);
    check_inside(dir, file);  // then read_npy_header opens it only as a regular file
    return headers.emplace(file, read_npy_header(path)).first->second;
  };
  Dump d = parse_manifest(text, manifest, header_of);
  d.dir = dir;
  return d;
}

}  // namespace parity
