#include "runners/dump.h"

#include <xxhash.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/npy.h"
#include "core/version.h"
#include "kernels/backend.h"

namespace parity {

namespace fs = std::filesystem;

std::string content_hash(const Tensor& t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "xxh64:%016llx", static_cast<unsigned long long>(XXH64(t.bytes(), t.nbytes(), 0)));
  return buf;
}

DumpWriter::DumpWriter(std::string dir, DumpInfo info, bool force) : dir_(std::move(dir)), info_(std::move(info)) {
  std::error_code ec;
  if (fs::exists(dir_, ec)) {
    if (!fs::is_directory(dir_, ec)) throw Error("exists and is not a folder").file(dir_);
    if (!fs::is_empty(dir_, ec)) {
      if (!force) throw Error("folder is not empty (use --force to overwrite)").file(dir_);
      // The manifest goes first: from here on the folder reads as an incomplete dump.
      if (!fs::remove(fs::path(dir_) / "manifest.json", ec) && ec) throw Error("cannot remove the old manifest: " + ec.message()).file(dir_);
      for (const auto& e : fs::directory_iterator(dir_)) {
        if (e.path().extension() == ".npy" && !fs::remove(e.path(), ec) && ec) {
          throw Error("cannot remove an old dump file: " + ec.message()).file(e.path().string());
        }
      }
    }
  } else if (!fs::create_directories(dir_, ec)) {
    throw Error("cannot create folder: " + ec.message()).file(dir_);
  }
}

std::string DumpWriter::write_tensor(const std::string& stem, const DumpTensor& t) {
  std::string file;
  const std::string hash = content_hash(t.tensor);
  const auto known = t.source.empty() ? output_files_.end() : output_files_.find(t.source);
  if (known != output_files_.end() && known->second.second == hash) {
    file = known->second.first;
  } else {
    file = stem + "." + t.role + ".npy";
    write_npy(dir_ + "/" + file, t.tensor);
    bytes_ += int64_t(t.tensor.nbytes());
  }
  nlohmann::json j = {{"role", t.role},
                      {"file", file},
                      {"dtype", std::string(dtype_name(t.tensor.dtype()))},
                      {"shape", t.tensor.shape().dims()},
                      {"source", t.source.empty() ? nlohmann::json(nullptr) : nlohmann::json(t.source)},
                      {"hash", hash}};
  return j.dump();
}

void DumpWriter::add_layer(const std::string& name, const std::string& line, double time_ms,
                           const std::vector<DumpTensor>& inputs, const std::vector<DumpTensor>& outputs) {
  char index[16];
  std::snprintf(index, sizeof index, "%04lld", static_cast<long long>(count_));
  // Files start with the layer index: names may repeat across a case file, and a sorted listing
  // (parity inspect DIR) then follows execution order.
  const std::string stem = std::string(index) + "." + name;
  std::string ins, outs;
  for (const DumpTensor& t : inputs) ins += (ins.empty() ? "" : ",") + write_tensor(stem, t);
  for (const DumpTensor& t : outputs) {
    outs += (outs.empty() ? "" : ",") + write_tensor(stem, t);
    output_files_[name + ":" + t.role] = {stem + "." + t.role + ".npy", content_hash(t.tensor)};
  }
  nlohmann::json head = {{"index", count_}, {"name", name}, {"op", op_name_of(line)}, {"params", line}, {"time_ms", time_ms}};
  std::string obj = head.dump();
  obj.pop_back();  // reopen the object to append the tensor arrays
  obj += ",\"inputs\":[" + ins + "],\"outputs\":[" + outs + "]}";
  layers_json_ += (count_ ? ",\n" : "\n") + obj;
  ++count_;
}

void DumpWriter::finish() {
  nlohmann::json head = {{"format", "parity-dump"}, {"version", 1},          {"model", info_.model},
                         {"backend", info_.backend}, {"device", info_.device}, {"seed", info_.seed},
                         {"tool_version", PARITY_VERSION}};
  std::string text = head.dump();
  text.pop_back();
  text += ",\"layers\":[" + layers_json_ + "\n]}\n";
  write_file_atomically(dir_ + "/manifest.json", text);
}

}  // namespace parity
