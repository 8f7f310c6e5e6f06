// A stand-in for a pip torchvision's _C library, to test how the aten nms loads one without a GPU
// machine: like it, this library links libtorch_python (whose Python C-API symbols only a loaded
// libpython defines) and registers torchvision::nms. It has no kernel: the tests check loading.
#include <torch/library.h>

TORCH_LIBRARY(torchvision, m) { m.def("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor"); }
