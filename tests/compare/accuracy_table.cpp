// parity_accuracy_table: the ACCURACY.md tables. Every conv2d of YOLOv5 n, s, m, l, x (the
// batch-1 and batch-32 case files), sampled (32 output channels x 8 elements per layer), computed
// in each variant of tests/compare/conv_variants.h, judged under each precision profile by the
// element-wise bound and the statistical test. Prints Markdown.
//   parity_accuracy_table [cases folder]   (default: the source tree's cases/)
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "cases/case_file.h"
#include "conv_variants.h"

using namespace parity;
using namespace parity::test;

namespace {

struct Cell {
  int passed = 0, layers = 0;
  double max_ratio = 0, max_channel = 0, min_ratio = 1e300, min_bits = 1e300, max_bits = 0;
  void add(const SampledVerdict& v) {
    ++layers;
    passed += v.passed();
    max_ratio = std::max(max_ratio, v.stats.rms_ratio), min_ratio = std::min(min_ratio, v.stats.rms_ratio);
    max_channel = std::max(max_channel, v.stats.channel_ratio);
    if (!v.stats.exact) min_bits = std::min(min_bits, v.stats.bits), max_bits = std::max(max_bits, v.stats.bits);
  }
};

const Precision kProfiles[] = {Precision::Fp32, Precision::Tf32, Precision::Fp16, Precision::Bf16};

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : std::string(PARITY_SOURCE_DIR) + "/cases";
  const std::vector<Variant> variants = all_variants();
  // [data][variant][profile] over every model and batch; [model][variant] under fp32 for yolo data.
  std::map<std::string, std::map<std::string, std::map<std::string, Cell>>> all;
  std::map<std::string, std::map<std::string, Cell>> by_model;
  int layers = 0;
  for (const char* model : {"yolov5n", "yolov5s", "yolov5m", "yolov5l", "yolov5x"}) {
    for (const char* suffix : {"", "-b32"}) {
      for (const Case& c : read_case_file(dir + "/" + model + suffix + ".cases")) {
        if (c.line.rfind("conv2d", 0) != 0) continue;
        ++layers;
        for (Data d : {Data::Yolo, Data::SameSign}) {
          const SampledLayer l = sample_layer(parse_conv_shape(c.line), d, variants);
          for (size_t v = 0; v < variants.size(); ++v) {
            for (Precision p : kProfiles) {
              const SampledVerdict verdict = judge_sampled(l, v, precision_profile(p));
              all[data_name(d)][variant_name(variants[v])][precision_profile(p).name].add(verdict);
              if (d == Data::Yolo && p == Precision::Fp32) by_model[std::string(model) + suffix][variant_name(variants[v])].add(verdict);
            }
          }
        }
      }
    }
  }
  std::printf("Conv layers: %d (every conv2d of yolov5{n,s,m,l,x}.cases and -b32.cases), 32 channels x 8 elements sampled each.\n\n", layers);
  for (const char* d : {"yolo", "same-sign"}) {
    std::printf("### Verdicts, %s data: layers passed / layers (max rms ratio, max channel ratio)\n\n", d);
    std::printf("| computed as | fp32 | tf32 | fp16 | bf16 | effective bits |\n|---|---|---|---|---|---|\n");
    for (Variant v : variants) {
      std::printf("| %s |", variant_name(v));
      for (Precision p : kProfiles) {
        const Cell& c = all[d][variant_name(v)][precision_profile(p).name];
        std::printf(" %d/%d (%.2g, %.2g) |", c.passed, c.layers, c.max_ratio, c.max_channel);
      }
      const Cell& c = all[d][variant_name(v)]["fp32"];
      if (c.min_bits > c.max_bits) {
        std::printf(" exact |\n");
      } else {
        std::printf(" %.1f .. %.1f |\n", c.min_bits, c.max_bits);
      }
    }
    std::printf("\n");
  }
  std::printf("### Under fp32, yolo data, per case file: layers passed / layers (rms ratio min .. max)\n\n| case file |");
  for (Variant v : variants) std::printf(" %s |", variant_name(v));
  std::printf("\n|---|");
  for (size_t i = 0; i < variants.size(); ++i) std::printf("---|");
  std::printf("\n");
  for (const auto& [file, row] : by_model) {
    std::printf("| %s |", file.c_str());
    for (Variant v : variants) {
      const Cell& c = row.at(variant_name(v));
      std::printf(" %d/%d (%.2g .. %.2g) |", c.passed, c.layers, c.min_ratio, c.max_ratio);
    }
    std::printf("\n");
  }
  return 0;
}
