#pragma once
// YOLOv5 v7.0 (ultralytics/yolov5, models/yolov5{n,s,m,l,x}.yaml) as the op calls of one
// inference forward: every conv2d (BatchNorm folded into its bias), SiLU, residual add, Concat,
// SPPF maxpool, nearest upsample and the Detect head (1x1 conv, decode, cat), in execution
// order, each named by its PyTorch module path (`model.2.m.0.cv1.conv`; a module called more
// than once, SPPF's maxpool, is `model.9.m`, `model.9.m:1`, `model.9.m:2`).
//
// The architecture is the yaml's backbone and head, scaled as models/yolo.py's parse_model
// does: repeats n -> max(round(n * depth_multiple), 1), channels c -> ceil(c * width_multiple
// / 8) * 8.
#include <cstdint>
#include <string>
#include <vector>

#include "cases/case_file.h"

namespace parity {

struct Yolov5Variant {
  std::string name;  // yolov5s
  double depth_multiple, width_multiple;
};

// n, s, m, l, x; throws parity::Error for another name.
const Yolov5Variant& yolov5_variant(const std::string& name);
std::vector<std::string> yolov5_variant_names();

// img must be a positive multiple of 32 (the largest stride).
std::vector<Case> yolov5_forward(const Yolov5Variant& v, int64_t img, int64_t batch);

// The post-processing op calls of YOLOv5's val.py on a forward's predictions [batch, 25200, 85]
// (at 640): utils/general.py non_max_suppression with conf_thres 0.001, iou_thres 0.6,
// multi_label and max_det 300, then val.py process_batch's IoU-threshold matching. Data-
// dependent counts (candidates, label pairs, matches) are fixed at realistic values for a
// trained model, and masks carry the density that yields them.
std::vector<Case> yolov5_postprocess(int64_t img, int64_t batch);

// Anchors of the three Detect levels (P3/8, P4/16, P5/32), in pixels.
const std::vector<std::vector<double>>& yolov5_anchors();

}  // namespace parity
