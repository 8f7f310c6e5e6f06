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
#include "core/shape.h"
#include "kernels/call.h"

namespace parity {

struct Yolov5Variant {
  std::string name;  // yolov5s
  double depth_multiple, width_multiple;
};

// n, s, m, l, x; throws parity::Error for another name.
const Yolov5Variant& yolov5_variant(const std::string& name);
std::vector<std::string> yolov5_variant_names();

// Where an op input comes from: the image, a parameter (by its state_dict key), or the
// output of an earlier node.
struct Operand {
  enum class Kind { Input, Param, Node };
  Kind kind;
  int node = -1;      // Node: index of the producing node (its only output)
  std::string param;  // Param: state_dict key, e.g. model.0.conv.weight (BatchNorm folded)
};

struct GraphNode {
  std::string name;  // PyTorch module path
  std::string line;  // the op's canonical line
  std::vector<Operand> inputs;  // in the order of the op's inputs
  Shape output;
};

struct Graph {
  Shape input;  // [batch, 3, img, img]
  std::vector<GraphNode> nodes;  // in execution order; the last is Detect's output
  std::vector<std::pair<std::string, Shape>> params;  // state_dict keys and shapes
};

// img must be a positive multiple of 32 (the largest stride).
Graph yolov5_graph(const Yolov5Variant& v, int64_t img, int64_t batch);

// The graph's nodes as cases (name and line).
std::vector<Case> yolov5_forward(const Yolov5Variant& v, int64_t img, int64_t batch);

// val.py's non_max_suppression settings (utils/general.py v7.0, as val.py calls it): the
// post-processing cases below and the model run (runners/model_run.cpp) both take them from here.
struct ValNms {
  static constexpr double conf_thres = 0.001, iou_thres = 0.6;
  static constexpr int64_t max_nms = 30000, max_det = 300;

  // Its calls for one image, from the counts its data made: `preds` predictions of `outputs`
  // values (85), `candidates` past the objectness test, `pairs` (candidate, class) past the class
  // test, `sorted` of them kept by the max_nms cut, `kept` by nms and max_det. The case list
  // (yolov5_postprocess, at realistic counts) and the model run (runners/model_run.cpp, at the
  // counts its data gives) both build every call here.
  static Call objectness(int64_t batch, int64_t preds);      // xc = prediction[..., 4] > conf_thres
  static Call candidates_of(int64_t preds, int64_t outputs);  // x = x[xc[xi]]
  static Call class_test(int64_t candidates, int64_t classes);  // x[:, 5:] > conf_thres
  static Call class_pairs(int64_t candidates, int64_t classes);  // i, j = (...).nonzero().T
  static Call pair_boxes(int64_t candidates, int64_t pairs);      // box[i]
  static Call pair_scores(int64_t candidates, int64_t outputs, int64_t pairs);  // x[i, 5 + j, None]
  static Call detections(int64_t pairs);                      // cat((box[i], score, j.float()), 1)
  static Call score_order(int64_t pairs);                     // x[:, 4].argsort(descending=True)
  static Call sorted_detections(int64_t pairs, int64_t sorted);  // x[order[:max_nms]]
  static Call suppression(int64_t sorted);                    // torchvision.ops.nms(boxes + c, scores, iou_thres)
  static Call output(int64_t sorted, int64_t kept);           // x[i[:max_det]]
};

// The post-processing op calls of YOLOv5's val.py on a forward's predictions [batch, 25200, 85]
// (at 640): utils/general.py non_max_suppression with conf_thres 0.001, iou_thres 0.6,
// multi_label and max_det 300, then val.py process_batch's IoU-threshold matching. Data-
// dependent counts (candidates, label pairs, matches) are fixed at realistic values for a
// trained model, and masks carry the density that yields them.
std::vector<Case> yolov5_postprocess(int64_t img, int64_t batch);

// Anchors of the three Detect levels (P3/8, P4/16, P5/32), in pixels.
const std::vector<std::vector<double>>& yolov5_anchors();

}  // namespace parity
