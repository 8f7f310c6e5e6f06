#pragma once
// Parameters of a YOLOv5 graph by state_dict key (model.0.conv.weight, ...; BatchNorm folded
// into the conv bias, as YOLOv5's fuse() leaves them).
#include <cstdint>
#include <map>
#include <string>

#include "cases/yolov5.h"
#include "core/tensor.h"

namespace parity {

using Weights = std::map<std::string, Tensor>;

// Deterministic weights that keep activations of order one through the network: conv weights
// drawn U(-b, b) with b = sqrt(6 / fan_in) (He's rule) and biases U(-0.1, 0.1), then, layer by
// layer on the reference backend over a seeded 320x320 image, each conv's weight and bias
// scaled so its output has standard deviation 1 (LSUV-style), and finally the Detect biases YOLOv5's _initialize_biases() adds (objectness
// log(8 / (640 / stride)^2), classes log(0.6 / (nc - 0.99))), so that confidences, and the
// candidate counts the post-processing sees, look like a model's.
// Cached per process: the returned tensors share storage between calls, so callers must not
// write into them.
Weights seeded_weights(const Yolov5Variant& v, uint64_t seed);
Weights calibrated_weights(const Yolov5Variant& v, uint64_t seed);  // the uncached computation

// `source`: empty for seeded weights; a folder of <key>.npy files; or a TorchScript archive
// (read through LibTorch, parameters and buffers by name). Every parameter of the graph must be
// present with its shape; floating types are converted to float32. Throws parity::Error
// naming the missing or mismatching key and file.
Weights load_weights(const Yolov5Variant& v, const Graph& g, const std::string& source, uint64_t seed);

}  // namespace parity
