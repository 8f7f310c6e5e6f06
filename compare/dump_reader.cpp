#include "compare/dump_reader.h"

#include <filesystem>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string_view>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/hash.h"
#include "core/npy.h"

namespace parity {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {
// Typed field access: a field of the wrong JSON type is an error naming the field (nlohmann's own
// conversions would turn 1e30 into an int64 with undefined behaviour).
const json& field(const json& j, const char* key) {
  if (!j.is_object()) throw Error(std::string("expected an object holding \"") + key + "\"");
  const auto it = j.find(key);
  if (it == j.end()) throw Error(std::string("missing field \"") + key + "\"");
  return *it;
}

std::string string_at(const json& j, const char* key) {
  const json& v = field(j, key);
  if (!v.is_string()) throw Error(std::string("field \"") + key + "\" is not a string");
  return v.get<std::string>();
}

int64_t integer_of(const json& v, const char* key) {
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX))) {
    throw Error(std::string("field \"") + key + "\" is not an integer");
  }
  return v.get<int64_t>();
}

// Optional fields: absent reads as empty, present must have the right type.
std::string optional_string(const json& j, const char* key) { return j.contains(key) ? string_at(j, key) : ""; }

// The form core/hash.h writes: anything else could never match a computed hash.
bool is_content_hash(const std::string& h) {
  const std::string prefix = "xxh64:";
  return h.size() == prefix.size() + 16 && h.compare(0, prefix.size(), prefix) == 0 &&
         h.find_first_not_of("0123456789abcdef", prefix.size()) == std::string::npos;
}

DumpTensorInfo tensor_info(const json& j) {
  DumpTensorInfo t;
  t.role = string_at(j, "role");
  t.file = string_at(j, "file");
  t.dtype = string_at(j, "dtype");
  const json& shape = field(j, "shape");
  if (!shape.is_array()) throw Error("field \"shape\" is not an array");
  for (const json& d : shape) t.shape.push_back(integer_of(d, "shape"));
  t.source = field(j, "source").is_null() ? "" : string_at(j, "source");
  t.hash = optional_string(j, "hash");
  if (!t.hash.empty() && !is_content_hash(t.hash)) throw Error("tensor " + t.file + " has a malformed hash \"" + t.hash + "\"");
  if (j.contains("derived")) {
    if (!j["derived"].is_boolean()) throw Error("field \"derived\" is not a boolean");
    t.derived = j["derived"].get<bool>();
  }
  // A manifest names files of its own folder only: never a path that reaches outside it.
  if (!is_plain_name(t.file)) {
    throw Error("tensor file \"" + t.file + "\" is not a plain file name in the dump folder");
  }
  if (!dtype_from_name(t.dtype)) throw Error("tensor " + t.file + " has unknown dtype \"" + t.dtype + "\"");
  Shape(t.shape);  // throws on a negative or overflowing dimension
  return t;
}

// A tensor file's content against its manifest entry (checked on opening the dump, and again on
// loading, since the file may have changed in between).
void check_as_listed(const std::string& path, DType dtype, const Shape& shape, const DumpTensorInfo& t) {
  if (std::string(dtype_name(dtype)) != t.dtype || shape.dims() != t.shape) {
    throw Error("holds " + std::string(dtype_name(dtype)) + " " + shape.str() + ", the manifest says " + t.dtype + " " +
                Shape(t.shape).str())
        .file(path);
  }
}

void check_recorded(const std::string& path, const DumpTensorInfo& t, const std::string& computed) {
  if (!t.hash.empty() && t.hash != computed) {
    throw Error("bytes do not match the hash the manifest records (" + t.hash + " recorded, " + computed +
                " read): the dump is corrupt")
        .file(path);
  }
}

Tensor read_as_listed(const std::string& path, const DumpTensorInfo& t) {
  Tensor x = read_npy(path);
  check_as_listed(path, x.dtype(), x.shape(), t);
  return x;
}

// Values as text: strings as they are, numbers (and anything else) as their JSON.
std::map<std::string, std::string> run_of(const json& j) {
  const json& run = field(j, "run");
  if (!run.is_object()) throw Error("field \"run\" is not an object");
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : run.items()) out[key] = value.is_string() ? value.get<std::string>() : value.dump();
  return out;
}

// The index of the layer `source` ("<layer>:<role>") names among those before it (`latest`: by
// name, the most recent), when it has that output; -1 otherwise.
int64_t producer_of(const std::string& source, const std::map<std::string, int64_t>& latest,
                    const std::vector<DumpLayer>& layers) {
  const size_t colon = source.rfind(':');
  if (colon == std::string::npos) return -1;
  const auto it = latest.find(source.substr(0, colon));
  if (it == latest.end()) return -1;
  for (const DumpTensorInfo& o : layers[size_t(it->second)].outputs) {
    if (o.role == source.substr(colon + 1)) return it->second;
  }
  return -1;
}

// Repeated names (a case file may reuse one): a layer is its name's n-th occurrence, and a
// source names the most recent earlier layer of that name.
void resolve_layers(std::vector<DumpLayer>& layers) {
  std::map<std::string, int64_t> count, latest;
  for (size_t i = 0; i < layers.size(); ++i) {
    DumpLayer& l = layers[i];
    for (DumpTensorInfo& t : l.inputs) t.source_layer = producer_of(t.source, latest, layers);
    l.occurrence = count[l.name]++;
    latest[l.name] = int64_t(i);
  }
}

std::string parent_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}
}  // namespace

bool is_plain_name(std::string_view name) {
  return !name.empty() && name[0] != '.' && name.find('/') == std::string_view::npos && name.find('\0') == std::string_view::npos;
}

Tensor Dump::load(const DumpTensorInfo& t) const {
  const std::string path = dir + "/" + t.file;
  Tensor x = read_as_listed(path, t);
  check_recorded(path, t, computed_hash(path, &x, t));
  return x;
}

std::string Dump::hash_of(const DumpTensorInfo& t) const {
  const std::string path = dir + "/" + t.file;
  std::string h = computed_hash(path, nullptr, t);
  check_recorded(path, t, h);
  return h;
}

// An input reusing an earlier output's file is not hashed again; two threads meeting the same
// new file may both hash it, which costs time only.
std::string Dump::computed_hash(const std::string& path, const Tensor* read, const DumpTensorInfo& t) const {
  {
    const std::lock_guard<std::mutex> lock(verified_->mutex);
    if (const auto it = verified_->hashes.find(path); it != verified_->hashes.end()) return it->second;
  }
  std::string h = read ? content_hash(*read) : content_hash(read_as_listed(path, t));
  const std::lock_guard<std::mutex> lock(verified_->mutex);
  return verified_->hashes.emplace(path, std::move(h)).first->second;
}

Dump parse_manifest(std::string_view text, const std::string& manifest) {
  Dump d;
  d.dir = parent_of(manifest);
  try {
    const json j = json::parse(text);
    if (!j.is_object() || !j.contains("format") || !j["format"].is_string() || j["format"] != "parity-dump") {
      throw Error("not a parity dump manifest (format is not parity-dump)");
    }
    if (!j.contains("version") || j["version"] != 1) throw Error("unsupported dump version " + (j.contains("version") ? j["version"].dump() : "(none)"));
    d.model = optional_string(j, "model");
    d.backend = optional_string(j, "backend");
    d.device = optional_string(j, "device");
    d.tool_version = optional_string(j, "tool_version");
    if (j.contains("seed")) {
      if (!j["seed"].is_number_unsigned()) throw Error("field \"seed\" is not an unsigned integer");
      d.seed = j["seed"].get<uint64_t>();
    }
    if (j.contains("run")) d.run = run_of(j);
    const json& layers = field(j, "layers");
    if (!layers.is_array()) throw Error("field \"layers\" is not an array");
    for (const json& l : layers) {
      DumpLayer layer;
      layer.index = integer_of(field(l, "index"), "index");
      layer.name = string_at(l, "name");
      layer.op = string_at(l, "op");
      layer.params = string_at(l, "params");
      if (l.contains("time_ms")) {
        if (!l["time_ms"].is_number()) throw Error("field \"time_ms\" is not a number");
        layer.time_ms = l["time_ms"].get<double>();
      }
      for (const char* list : {"inputs", "outputs"}) {
        const json& tensors = field(l, list);
        if (!tensors.is_array()) throw Error(std::string("field \"") + list + "\" is not an array");
        for (const json& t : tensors) (list[0] == 'i' ? layer.inputs : layer.outputs).push_back(tensor_info(t));
      }
      d.layers.push_back(std::move(layer));
    }
    resolve_layers(d.layers);
  } catch (const json::exception& e) {
    throw Error(std::string("malformed manifest: ") + e.what()).file(manifest);
  } catch (Error& e) {
    e.file(manifest);
    throw;
  }
  return d;
}

Dump read_dump(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error("not a folder").file(dir);
  const std::string manifest = dir + "/manifest.json";
  if (!fs::exists(manifest, ec)) throw Error("no manifest.json: an incomplete dump (interrupted, or still being written)").file(dir);
  std::ifstream in(manifest, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) throw Error("cannot read").file(manifest);
  Dump d = parse_manifest(text, manifest);
  d.dir = dir;
  // Every listed file present, whole, and as described: a dump that passes this never fails a
  // compare half way for a file, and hash-identical tensors (never read) are still checked.
  std::set<std::string> checked;
  for (const DumpLayer& l : d.layers) {
    for (const auto* list : {&l.inputs, &l.outputs}) {
      for (const DumpTensorInfo& t : *list) {
        if (!checked.insert(t.file).second) continue;
        const std::string path = dir + "/" + t.file;
        if (!fs::exists(path, ec)) throw Error("layer " + l.name + " lists a missing file").file(path);
        const NpyHeaderInfo h = read_npy_header(path);
        check_as_listed(path, h.dtype, h.shape, t);
      }
    }
  }
  return d;
}

}  // namespace parity
