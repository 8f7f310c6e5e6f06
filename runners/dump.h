#pragma once
// Dump writer: a folder with one .npy per layer input and output and manifest.json, written
// last and atomically, so a folder without a manifest is an incomplete dump (docs/DESIGN.md).
// Tensor files are written without a sync each; finish() syncs the filesystem once, then writes
// the manifest: a killed run or a lost machine never leaves a manifest over missing bytes.
//
// manifest.json: {"format": "parity-dump", "version": 1, "model", "backend", "device", "seed",
// "tool_version", "run" (DumpRun: what the dump was computed from; always "model" and "seed"),
// "layers": [{"index", "name", "op", "params" (the op's canonical line), "time_ms",
// "inputs": [tensor], "outputs": [tensor]}]}; tensor = {"role", "file", "dtype", "shape",
// "source" (the layer output it came from, or null), "hash" ("xxh3:<16 hex>", core/hash.h),
// and on an input whose content is not its source output as is, "derived": true}. Every field,
// with what a hand-written manifest may leave out: docs/MANIFEST.md.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/tensor.h"

namespace parity {

// The manifest's "run" beyond DumpInfo's model and seed; empty or unset fields are left out.
struct DumpRun {
  std::optional<int64_t> img, batch;
  std::string weights, weights_digest;  // "seeded" or the weights path; chained_content_hash
  std::string input, input_digest;      // "seeded" or the input .npy path; content_hash
  std::string precision;                 // "fp16" or "bf16" for a --dtype run (compare's --precision auto reads it); empty: fp32
  std::string float32_kernels;           // a --dtype run's ops the backend has no half kernel for: run in float32, rounded
};

struct DumpInfo {
  std::string model, backend, device;  // model: a YOLOv5 variant, or the case file replayed
  uint64_t seed = 0;
  DumpRun run = {};
};

// An input whose source is an output already in the dump, with the same content, dtype and
// shape, is not written again: its entry points at that output's file.
struct DumpTensor {
  std::string role;    // "x", "w", "out0" ...
  std::string source;  // "<layer name>:out<k>" it is (or is derived from), empty when none
  Tensor tensor;
};

// Files are written by a thread of the writer's own, so the run goes on while its tensors reach
// the page cache; at most kQueuedBytes wait (add_layer blocks beyond). The tensors are read
// later, so a caller must not change a tensor it handed over (clone it first). A write error surfaces
// from the next add_layer, skip_layer or finish. Destroyed without finish() (the run failed),
// it stops and leaves no manifest.
class DumpWriter {
 public:
  static constexpr int64_t kQueuedBytes = int64_t(256) << 20;

  // Creates `dir`; refuses a non-empty one unless `force` (then its old manifest goes first,
  // so the folder never looks complete while it is rewritten).
  DumpWriter(std::string dir, DumpInfo info, bool force);
  ~DumpWriter();
  DumpWriter(const DumpWriter&) = delete;
  DumpWriter& operator=(const DumpWriter&) = delete;

  void add_layer(const std::string& name, const std::string& line, double time_ms, const std::vector<DumpTensor>& inputs,
                 const std::vector<DumpTensor>& outputs);
  // A layer left out of the dump (a --layers filter): its outputs are only remembered, so that
  // inputs taken from them are still marked derived or not.
  void skip_layer(const std::string& name, const std::vector<DumpTensor>& outputs);
  // What the run was computed from, when that is known only after the folder was claimed.
  void set_run(DumpRun run) { info_.run = std::move(run); }
  void finish();  // waits for the files, syncs them to disk, writes manifest.json
  const std::string& dir() const { return dir_; }
  int64_t bytes_written() const { return bytes_; }
  // Seconds the writer thread spent writing tensor files (hashing included), and finish()'s
  // wait for the disk (syncfs); valid after finish().
  double write_seconds() const { return write_s_; }
  double sync_seconds() const { return sync_s_; }

 private:
  struct Job {
    bool skip = false;
    std::string name, line;
    double time_ms = 0;
    std::vector<DumpTensor> inputs, outputs;
    int64_t bytes = 0;
  };
  void enqueue(Job job);
  void work();
  void write_layer(const Job& job);
  void rethrow_failure();

  struct Output {
    std::string file;  // empty for a skipped layer's output
    std::string hash, dtype;
    std::vector<int64_t> shape;
  };

  std::string write_input(const std::string& stem, const DumpTensor& t);
  std::string write_output(const std::string& stem, const std::string& name, const DumpTensor& t);
  std::string write_file(const std::string& stem, const DumpTensor& t);
  void remember(const std::string& name, const DumpTensor& t, std::string file, std::string hash);

  std::string dir_;
  DumpInfo info_;
  std::string layers_json_;  // accumulated, comma-separated layer objects
  int64_t count_ = 0, bytes_ = 0;
  std::map<std::string, Output> outputs_;  // by "<layer>:out<k>", the latest layer of that name
  double write_s_ = 0, sync_s_ = 0;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Job> queue_;
  int64_t queued_bytes_ = 0;
  bool busy_ = false, stop_ = false;
  std::exception_ptr failure_;
  std::thread worker_;  // last: started once everything above exists
};

}  // namespace parity
