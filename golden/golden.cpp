#include "golden/golden.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cases/case_file.h"
#include "compare/dump_reader.h"
#include "compare/dump_compare.h"
#include "compare/layer_sides.h"
#include "compare/judge.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "kernels/aten/plugin.h"
#include "kernels/backend.h"
#include "runners/dump.h"
#include "runners/inputs.h"
#include "runners/model_run.h"

namespace parity {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Each op on small YOLOv5-derived shapes: the stem, a 3x3 with 17/19-channel tails, a 1x1 on a
// batch of 2, a stride-2 3x3; SiLU on both layouts; the Concat, Detect and multi-label cats; the
// post-processing masks, gathers and nms at a tenth of their 640 sizes.
const std::vector<std::pair<std::string, std::vector<std::string>>>& op_packs() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> packs = {
      {"conv2d",
       {"conv2d x=1x3x64x64 w=8x3x6x6 bias stride=2 pad=2 name=stem", "conv2d x=1x17x19x19 w=19x17x3x3 bias pad=1 name=tail3x3",
        "conv2d x=2x32x9x9 w=32x32x1x1 bias name=pointwise", "conv2d x=1x16x16x16 w=32x16x3x3 bias stride=2 pad=1 name=down"}},
      {"silu", {"silu x=1x8x32x32 name=act", "silu x=2x19x7x7 name=tail"}},
      {"cat",
       {"cat x=1x8x10x10,1x8x10x10 dim=1 name=concat", "cat x=1x300x85,1x75x85,1x12x85 dim=1 name=detect",
        "cat x=17x4,17x1,17x1 dim=1 name=multi_label", "cat x=5x2,5x1 dim=-1 dtype=int64 name=int64"}},
      {"nonzero", {"nonzero x=1008x80 name=multi_label density=0.005", "nonzero x=2x19x23 name=tail density=0.3"}},
      {"index", {"index x=1008x85 mask=1008 name=mask density=0.4", "index x=403x4 idx=160 name=select",
                 "index x=403x85 pairs=160 name=pairs"}},
      {"nms", {"nms boxes=400x4 iou=0.6 batched name=batched", "nms boxes=200x4 iou=0.45 name=plain"}},
      // val.py's float16 on a GPU (issue #40): the stem conv, a 3x3 tail, SiLU, the Detect
      // decode and the post-processing's mask, gather and nms, every value a float16 one.
      {"fp16",
       {"conv2d x=1x3x64x64 w=8x3x6x6 bias stride=2 pad=2 precision=fp16 name=stem",
        "conv2d x=1x17x19x19 w=19x17x3x3 bias pad=1 precision=fp16 name=tail3x3", "silu x=1x8x32x32 precision=fp16 name=act",
        "detect_decode x=1x255x8x8 stride=32 anchors=116,90,156,198,373,326 precision=fp16 name=decode",
        "index x=1008x85 mask=1008 precision=fp16 name=mask density=0.4", "nms boxes=400x4 iou=0.6 batched precision=fp16 name=batched"}},
  };
  return packs;
}

std::string journal_of(const std::string& root) { return root + "/.swap"; }

void write_meta(const std::string& dir, const json& meta) { write_file_atomically(dir + "/golden.json", meta.dump(2) + "\n"); }

void write_op_pack(const std::string& root, const std::string& op, const std::vector<std::string>& lines) {
  const std::string dir = root + "/" + op;
  DumpWriter dump(dir, DumpInfo{"golden:" + op, "expected", "cpu", 0}, false);
  json provenance = json::object();
  const auto f64 = aten_plugin().float64;
  for (const std::string& text : lines) {
    const Case c = parse_case(text, "golden " + op);
    const std::vector<Tensor> in = seeded_inputs(c, 0);
    std::vector<Tensor> out = f64(c.line, in);
    const HalfType half = Call(c.line).half();
    provenance[c.name] = out.empty() ? "reference" : half == HalfType::None ? "LibTorch in float64, rounded once to float32"
                                                                            : std::string("LibTorch in float64, rounded to float32 then ") + half_name(half);
    if (out.empty()) out = backend("ref").run(c.line, in);  // the reference rounds a half call's outputs itself
    round_floats(out, half);
    std::vector<DumpTensor> din, dout;
    const std::vector<TensorSpec> specs = op_inputs(c.line);
    for (size_t k = 0; k < in.size(); ++k) din.push_back({specs[k].name, "", in[k]});
    for (size_t k = 0; k < out.size(); ++k) dout.push_back({"out" + std::to_string(k), "", out[k]});
    dump.add_layer(c.name, c.line, 0, din, dout);
  }
  dump.finish();
  write_meta(dir, {{"pack", op},
                   {"description", op + " on small YOLOv5-derived shapes, inputs seeded (seed 0) as parity replay seeds them"},
                   {"tolerance", "compare/tolerance.h: the dtype defaults, conv2d's reduction bound, NMS differences classified"},
                   {"provenance", provenance}});
}

}  // namespace

std::vector<std::string> golden_packs(const std::string& root) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) throw Error("no golden folder").file(root);
  if (fs::exists(journal_of(root), ec)) {
    throw Error("an interrupted golden update left packs half swapped in (run parity golden update to finish it)").file(root);
  }
  for (const auto& e : fs::directory_iterator(root)) {
    const std::string name = e.path().filename().string();
    if (!e.is_directory() || name[0] == '.') continue;  // .update, .previous: an update's scratch
    for (const char* needed : {"manifest.json", "golden.json"}) {
      if (!fs::exists(e.path() / needed, ec)) throw Error(std::string("pack without ") + needed + ": incomplete").file(e.path().string());
    }
    out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  if (out.empty()) throw Error("holds no golden packs (run parity golden update)").file(root);
  return out;
}

std::vector<GoldenLayerResult> check_golden_pack(const std::string& dir, const std::string& backend_name) {
  const Dump d = read_dump(dir);
  const Backend& be = backend(backend_name);
  const std::string pack = fs::path(dir).filename().string();
  std::vector<GoldenLayerResult> results;
  for (const DumpLayer& l : d.layers) {
    GoldenLayerResult r;
    r.pack = pack, r.layer = l.name, r.line = l.line;
    if (const std::string why = be.unavailable_reason(); !why.empty()) {
      r.state = State::Skipped, r.reason = why;
    } else if (!be.supports(l.op)) {
      r.state = State::Unsupported, r.reason = "backend " + be.name() + " has no " + l.op;
    } else {
      // A = the pack's expected outputs, B = the backend on the pack's inputs: judged as compare judges.
      const LayerSide expected = layer_side(d, l);
      LayerSide actual;
      actual.line = l.line, actual.roles = expected.roles, actual.inputs = expected.inputs;
      try {
        actual.outputs = be.run(l.line, expected.inputs());
      } catch (const Unsupported& e) {  // no kernel for the layer's half type on this backend
        r.state = State::Unsupported, r.reason = e.what();
        results.push_back(std::move(r));
        continue;
      }
      const LayerVerdict v = judge_layer(l.name, expected, actual, true, JudgeOptions{});
      for (const OutputVerdict& t : v.outputs) r.max_abs = std::max(r.max_abs, t.diff.max_abs);
      r.state = v.state, r.explained = v.explained, r.structural = v.structural, r.reason = v.reason;
      if (v.state == State::Failed) {
        r.reason = v.defective() == Sides::A ? "the pack's expected output is not the judge's: " + v.reason
                                             : "defective: " + std::string(sides_name(v.defective())) + ": " + v.reason;
      }
    }
    results.push_back(std::move(r));
  }
  return results;
}

namespace {

// Moves each listed pack of `fresh` into `root`, the old one aside into <root>/.previous first.
// Idempotent: a pack already moved (no longer in `fresh`) is left alone, so a second run after a
// kill finishes the first.
void move_packs(const std::string& root, const std::string& fresh, const std::vector<std::string>& names) {
  const std::string old = root + "/.previous";
  fs::create_directories(old);
  for (const std::string& name : names) {
    const std::string incoming = fresh + "/" + name, current = root + "/" + name;
    if (!fs::exists(incoming)) continue;
    if (fs::exists(current)) {
      fs::remove_all(old + "/" + name);
      fs::rename(current, old + "/" + name);
    }
    fs::rename(incoming, current);
  }
  fs::remove_all(old);
  fs::remove_all(fresh);
  fs::remove(journal_of(root));
}

}  // namespace

void swap_in_golden_packs(const std::string& root, const std::string& fresh) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(fresh)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  write_file_atomically(journal_of(root), json(names).dump() + "\n");
  move_packs(root, fresh, names);
}

bool finish_golden_swap(const std::string& root, const std::string& fresh) {
  if (!fs::exists(journal_of(root))) return false;
  std::vector<std::string> names;
  try {
    std::ifstream in(journal_of(root));
    names = json::parse(in).get<std::vector<std::string>>();
  } catch (const json::exception& e) {
    throw Error(std::string("unreadable swap journal: ") + e.what()).file(journal_of(root));
  }
  for (const std::string& n : names) {
    if (!is_plain_name(n)) throw Error("swap journal names \"" + n + "\", not a pack").file(journal_of(root));
  }
  move_packs(root, fresh, names);
  return true;
}

void write_golden_packs(const std::string& root) {
  fs::create_directories(root);
  for (const auto& [op, lines] : op_packs()) write_op_pack(root, op, lines);
  RunOptions o;
  o.model = "yolov5n";
  o.img = 128;
  o.dump_dir = root + "/yolov5n_128";
  run_model(o);
  write_meta(o.dump_dir, {{"pack", "yolov5n_128"},
                          {"description", "yolov5n v7.0, 128x128, batch 1, seeded weights and image (seed 0): every layer, forward "
                                          "and post-processing (no candidate passes at this size, so it ends after the multi-label "
                                          "threshold)"},
                          {"tolerance", "compare/tolerance.h"},
                          {"provenance", "reference (parity run --backend ref): float64 accumulation, rounded once"}});
}

}  // namespace parity
