#include "compare/dump_reader.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/npy.h"

namespace parity {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {
DumpTensorInfo tensor_info(const json& j) {
  DumpTensorInfo t;
  t.role = j.at("role").get<std::string>();
  t.file = j.at("file").get<std::string>();
  t.dtype = j.at("dtype").get<std::string>();
  t.shape = j.at("shape").get<std::vector<int64_t>>();
  t.source = j.at("source").is_null() ? "" : j.at("source").get<std::string>();
  t.hash = j.value("hash", "");
  return t;
}
}  // namespace

Tensor Dump::load(const DumpTensorInfo& t) const {
  const std::string path = dir + "/" + t.file;
  Tensor x = read_npy(path);
  if (std::string(dtype_name(x.dtype())) != t.dtype || x.shape().dims() != t.shape) {
    throw Error("holds " + std::string(dtype_name(x.dtype())) + " " + x.shape().str() + ", the manifest says " + t.dtype +
                " " + Shape(t.shape).str())
        .file(path);
  }
  return x;
}

Dump read_dump(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error("not a folder").file(dir);
  const std::string manifest = dir + "/manifest.json";
  if (!fs::exists(manifest, ec)) throw Error("no manifest.json: an incomplete dump (interrupted, or still being written)").file(dir);
  std::ifstream in(manifest);
  Dump d;
  d.dir = dir;
  try {
    const json j = json::parse(in);
    if (j.value("format", "") != "parity-dump") throw Error("not a parity dump manifest (format is not parity-dump)");
    if (j.value("version", 0) != 1) throw Error("unsupported dump version " + std::to_string(j.value("version", 0)));
    d.model = j.value("model", "");
    d.backend = j.value("backend", "");
    d.device = j.value("device", "");
    d.tool_version = j.value("tool_version", "");
    d.seed = j.value("seed", uint64_t(0));
    for (const json& l : j.at("layers")) {
      DumpLayer layer;
      layer.index = l.at("index").get<int64_t>();
      layer.name = l.at("name").get<std::string>();
      layer.op = l.at("op").get<std::string>();
      layer.params = l.at("params").get<std::string>();
      layer.time_ms = l.value("time_ms", 0.0);
      for (const json& t : l.at("inputs")) layer.inputs.push_back(tensor_info(t));
      for (const json& t : l.at("outputs")) layer.outputs.push_back(tensor_info(t));
      d.layers.push_back(std::move(layer));
    }
  } catch (const json::exception& e) {
    throw Error(std::string("malformed manifest: ") + e.what()).file(manifest);
  } catch (Error& e) {
    e.file(manifest);
    throw;
  }
  for (const DumpLayer& l : d.layers) {
    for (const auto* list : {&l.inputs, &l.outputs}) {
      for (const DumpTensorInfo& t : *list) {
        if (!fs::exists(dir + "/" + t.file, ec)) throw Error("layer " + l.name + " lists a missing file").file(dir + "/" + t.file);
      }
    }
  }
  return d;
}

}  // namespace parity
