#include "runners/dump.h"

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/hash.h"
#include "core/npy.h"
#include "core/stopwatch.h"
#include "core/version.h"
#include "kernels/backend.h"

namespace parity {

namespace fs = std::filesystem;

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
  worker_ = std::thread([this] { work(); });
}

DumpWriter::~DumpWriter() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    queue_.clear();  // not finished: the run failed, and the folder stays without a manifest
  }
  changed_.notify_all();
  worker_.join();
}

void DumpWriter::rethrow_failure() {
  if (failure_) std::rethrow_exception(failure_);
}

void DumpWriter::enqueue(Job job) {
  for (const auto* list : {&job.inputs, &job.outputs}) {
    for (const DumpTensor& t : *list) job.bytes += int64_t(t.tensor.nbytes());
  }
  std::unique_lock<std::mutex> lock(mutex_);
  // One job may exceed the bound alone; then it waits for an empty queue.
  changed_.wait(lock, [&] { return failure_ || queue_.empty() || queued_bytes_ + job.bytes <= kQueuedBytes; });
  rethrow_failure();
  queued_bytes_ += job.bytes;
  queue_.push_back(std::move(job));
  changed_.notify_all();
}

void DumpWriter::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopped
    Job job = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    std::exception_ptr failed;
    try {
      const Stopwatch watch;
      write_layer(job);
      write_s_ += watch.seconds();
    } catch (...) {
      failed = std::current_exception();
    }
    lock.lock();
    busy_ = false;
    queued_bytes_ -= job.bytes;
    if (failed) {
      failure_ = failed;
      queue_.clear();
      queued_bytes_ = 0;
    }
    changed_.notify_all();
  }
}

namespace {
std::string tensor_entry(const DumpTensor& t, const std::string& file, const std::string& hash, bool derived) {
  nlohmann::json j = {{"role", t.role},
                      {"file", file},
                      {"dtype", std::string(dtype_name(t.tensor.dtype()))},
                      {"shape", t.tensor.shape().dims()},
                      {"source", t.source.empty() ? nlohmann::json(nullptr) : nlohmann::json(t.source)},
                      {"hash", hash}};
  if (derived) j["derived"] = true;
  return j.dump();
}

std::string stem_of(int64_t index, const std::string& name) {
  char digits[16];
  std::snprintf(digits, sizeof digits, "%04lld", static_cast<long long>(index));
  // Files start with the layer index: names may repeat across a case file, and a sorted listing
  // (parity inspect DIR) then follows execution order.
  return std::string(digits) + "." + name;
}

nlohmann::json run_json(const DumpInfo& info) {
  const DumpRun& r = info.run;
  nlohmann::json j = {{"model", info.model}, {"seed", info.seed}};
  if (r.img) j["img"] = *r.img;
  if (r.batch) j["batch"] = *r.batch;
  const std::pair<const char*, std::string> texts[] = {
      {"weights", r.weights}, {"weights_digest", r.weights_digest}, {"input", r.input}, {"input_digest", r.input_digest}};
  for (const auto& [key, value] : texts) {
    if (!value.empty()) j[key] = value;
  }
  if (!r.precision.empty()) j["precision"] = r.precision;
  if (!r.float32_kernels.empty()) j["float32_kernels"] = r.float32_kernels;
  return j;
}
}  // namespace

std::string DumpWriter::write_file(const std::string& stem, const DumpTensor& t) {
  const std::string file = stem + "." + t.role + ".npy";
  write_npy_unsynced(dir_ + "/" + file, t.tensor);  // made durable at once by finish()
  bytes_ += int64_t(t.tensor.nbytes());
  return file;
}

void DumpWriter::remember(const std::string& name, const DumpTensor& t, std::string file, std::string hash) {
  outputs_[name + ":" + t.role] = {std::move(file), std::move(hash), std::string(dtype_name(t.tensor.dtype())),
                                   t.tensor.shape().dims()};
}

std::string DumpWriter::write_input(const std::string& stem, const DumpTensor& t) {
  const std::string hash = content_hash(t.tensor);
  const auto known = t.source.empty() ? outputs_.end() : outputs_.find(t.source);
  if (known == outputs_.end()) return tensor_entry(t, write_file(stem, t), hash, false);
  // The hash covers bytes only: a reshaped output (same bytes, other shape) is derived too.
  const Output& o = known->second;
  const bool same = o.hash == hash && o.dtype == dtype_name(t.tensor.dtype()) && o.shape == t.tensor.shape().dims();
  return tensor_entry(t, same && !o.file.empty() ? o.file : write_file(stem, t), hash, !same);
}

std::string DumpWriter::write_output(const std::string& stem, const std::string& name, const DumpTensor& t) {
  const std::string hash = content_hash(t.tensor), file = write_file(stem, t);
  remember(name, t, file, hash);
  return tensor_entry(t, file, hash, false);
}

void DumpWriter::add_layer(const std::string& name, const std::string& line, double time_ms,
                           const std::vector<DumpTensor>& inputs, const std::vector<DumpTensor>& outputs) {
  enqueue(Job{false, name, line, time_ms, inputs, outputs});
}

void DumpWriter::skip_layer(const std::string& name, const std::vector<DumpTensor>& outputs) {
  enqueue(Job{true, name, "", 0, {}, outputs});
}

void DumpWriter::write_layer(const Job& job) {
  if (job.skip) {
    for (const DumpTensor& t : job.outputs) remember(job.name, t, "", content_hash(t.tensor));
    return;
  }
  const std::string stem = stem_of(count_, job.name);
  std::string ins, outs;
  for (const DumpTensor& t : job.inputs) ins += (ins.empty() ? "" : ",") + write_input(stem, t);
  for (const DumpTensor& t : job.outputs) outs += (outs.empty() ? "" : ",") + write_output(stem, job.name, t);
  nlohmann::json head = {
      {"index", count_}, {"name", job.name}, {"op", op_name_of(job.line)}, {"params", job.line}, {"time_ms", job.time_ms}};
  std::string obj = head.dump();
  obj.pop_back();  // reopen the object to append the tensor arrays
  obj += ",\"inputs\":[" + ins + "],\"outputs\":[" + outs + "]}";
  layers_json_ += (count_ ? ",\n" : "\n") + obj;
  ++count_;
}

void DumpWriter::finish() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return failure_ || (queue_.empty() && !busy_); });
    rethrow_failure();
  }
  nlohmann::json head = {{"format", "parity-dump"}, {"version", 1},          {"model", info_.model},
                         {"backend", info_.backend}, {"device", info_.device}, {"seed", info_.seed},
                         {"tool_version", PARITY_VERSION}, {"run", run_json(info_)}};
  std::string text = head.dump();
  text.pop_back();
  text += ",\"layers\":[" + layers_json_ + "\n]}\n";
  // Every tensor on disk before the manifest says the dump is complete.
  const Stopwatch sync;
  sync_filesystem_of(dir_);
  sync_s_ = sync.seconds();
  write_file_atomically(dir_ + "/manifest.json", text);
}

}  // namespace parity
