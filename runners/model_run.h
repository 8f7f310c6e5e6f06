#pragma once
// parity run: a whole YOLOv5 forward, layer by layer on one backend, then val.py's
// post-processing per image, optionally dumping every layer's inputs and outputs.
//
// Post-processing follows utils/general.py non_max_suppression (v7.0) with conf_thres 0.001,
// iou_thres 0.6, multi_label, max_nms 30000, max_det 300. Its ops (threshold, index, nonzero,
// cat, argsort, nms) run on the backend as layers nms.xc and nms.<image>.<step>; the glue
// between them (taking columns, conf = obj * cls, xywh -> xyxy, j + 5, truncation to max_nms
// and max_det) is float32 host code, the same for every backend. In a dump, every input of that
// glue names the layer output it was taken from (marked derived when not that output as is), so
// only the image and the weights come from no layer; the manifest's "run" records those.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/half.h"

namespace parity {

struct RunOptions {
  std::string model = "yolov5s", backend = "ref";
  int64_t img = 640, batch = 1;
  uint64_t seed = 0;
  std::string weights;      // empty: seeded; a folder of .npy; a TorchScript file
  std::string input;        // empty: seeded image in [0, 1); else a .npy [batch, 3, img, img]
  std::string dump_dir;     // empty: no dump
  bool force = false;       // overwrite a non-empty dump folder
  std::string layers;       // regular expression: only matching layers are dumped (all run)
  bool postprocess = true;
  HalfType dtype = HalfType::None;  // --dtype: every layer's call in that type, weights and image rounded to it
};

struct RunResult {
  int64_t layers = 0;
  double total_ms = 0;
  int64_t dump_bytes = 0, estimated_bytes = 0;
  double dump_write_s = 0, dump_sync_s = 0;  // DumpWriter::write_seconds, sync_seconds
  std::vector<int64_t> detections;  // per image
};

// `progress(i, n, name)` is called before layer i of the forward (n layers; post-processing
// layers follow with i >= n). Throws parity::Error for bad options or input, and when the
// dump folder's file system has less free space than the dump needs (checked before starting).
RunResult run_model(const RunOptions& o, const std::function<void(int64_t, int64_t, const std::string&)>& progress = nullptr);

}  // namespace parity
