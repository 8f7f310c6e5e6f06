// parity run: a whole YOLOv5 on one backend, every layer dumped.
#include <fmt/format.h>

#include <iostream>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/progress.h"
#include "runners/model_run.h"

namespace parity::cli {

namespace {

int run(const RunOptions& o) {
  Progress progress;
  const RunResult r = run_model(o, [&](int64_t i, int64_t n, const std::string& name) { progress.show(std::min(i + 1, n), n, name); });
  progress.clear();
  std::string dets;
  for (int64_t d : r.detections) dets += (dets.empty() ? "" : ", ") + std::to_string(d);
  fmt::print("{} {}x{} batch {} on {}: {} layers in {:.1f} ms", o.model, o.img, o.img, o.batch, o.backend, r.layers, r.total_ms);
  if (!r.detections.empty()) fmt::print("; detections per image: {}", dets);
  fmt::print("\n");
  if (!o.dump_dir.empty()) {
    fmt::print("dump {}: {:.1f} MiB written (estimated {:.1f} MiB); the writer thread took {:.2f} s ({:.0f} MB/s), "
               "the sync to disk {:.2f} s\n",
               o.dump_dir, double(r.dump_bytes) / (1 << 20), double(r.estimated_bytes) / (1 << 20), r.dump_write_s,
               r.dump_write_s > 0 ? double(r.dump_bytes) / r.dump_write_s / 1e6 : 0.0, r.dump_sync_s);
  }
  return kPassed;
}

}  // namespace

Command add_run_command(CLI::App& parent) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* app = parent.add_subcommand(
      "run", "Run a whole YOLOv5 (v7.0) forward and val.py's post-processing on one backend, layer by layer, and dump "
             "every layer's inputs and outputs");
  app->add_option("model", o->model, "yolov5n, yolov5s, yolov5m, yolov5l or yolov5x")->required();
  app->add_option("--backend", o->backend, backend_choices())->capture_default_str();
  const auto load_plugins = add_backend_plugin_flag(app);
  app->add_option("--img", o->img, "image size, a multiple of 32")->capture_default_str();
  app->add_option("--batch", o->batch, "batch size")->capture_default_str();
  app->add_option("--seed", o->seed, "seed of the weights and the input")->capture_default_str();
  add_dtype_flag(app, o->dtype);
  app->add_option("--weights", o->weights,
                  "a folder of <state_dict key>.npy (BatchNorm folded) or a TorchScript archive; default: seeded");
  app->add_option("--input", o->input, "the image batch as .npy, float32 [batch, 3, img, img]; default: seeded in [0, 1)");
  app->add_option("--dump", o->dump_dir, "write the dump here: one .npy per layer input/output, manifest.json last");
  app->add_flag("--force", o->force, "let --dump overwrite a non-empty folder");
  app->add_option("--layers", o->layers, "dump only layers whose name matches this regular expression (all run)");
  app->footer(
      "Layer names are PyTorch module paths (model.17.cv3.conv); post-processing layers are nms.xc and\n"
      "nms.<image>.<step>. The needed disk space is checked before the run starts. Exit 3 on bad input.");
  return {app, [o, load_plugins] {
            load_plugins();
            return run(*o);
          }};
}

}  // namespace parity::cli
