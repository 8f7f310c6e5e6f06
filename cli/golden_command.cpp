// parity golden check | update: every backend against the checked-in golden packs.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "compare/dump_compare.h"
#include "core/error.h"
#include "golden/golden.h"
#include "kernels/backend.h"

namespace parity::cli {

namespace fs = std::filesystem;

namespace {

struct Options {
  std::string root, backend = "ref", pack;  // root empty: golden_root() finds it
};

// A folder of golden packs (one holds golden.json), or one an interrupted update left half
// swapped; not any folder named golden (a build tree has one for the library's objects).
bool holds_golden_packs(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return false;
  if (fs::exists(dir + "/.swap", ec)) return true;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (fs::exists(e.path() / "golden.json", ec)) return true;
  }
  return false;
}

// Without --root: ./golden when the command runs from the repository root, else the golden
// folder of the source tree this binary was built from, so a check works from any directory.
std::string golden_root(const Options& o) {
  if (!o.root.empty()) return o.root;
  std::error_code ec;
  if (holds_golden_packs("golden")) return "golden";
  const std::string built_from = std::string(PARITY_SOURCE_DIR) + "/golden";
  if (fs::is_directory(built_from, ec)) return built_from;
  throw Error("no golden folder here or in the source tree " + std::string(PARITY_SOURCE_DIR) +
              " (run from the repository root or give --root DIR)");
}

int check(Options o) {
  backend(o.backend);  // an unknown name is a usage error
  o.root = golden_root(o);
  std::vector<std::string> packs = golden_packs(o.root);
  if (!o.pack.empty()) {
    if (std::find(packs.begin(), packs.end(), o.pack) == packs.end()) throw Error("no golden pack " + o.pack).file(o.root);
    packs = {o.pack};
  }
  int counts[kStateCount] = {};
  int explained = 0, structural = 0;
  std::string skipped_reason;
  for (const std::string& p : packs) {
    int pack_failed = 0, pack_layers = 0;
    for (const GoldenLayerResult& r : check_golden_pack(o.root + "/" + p, o.backend)) {
      ++counts[int(r.state)], ++pack_layers;
      explained += r.explained;
      structural += r.structural && r.state == State::Failed;
      if (r.state == State::Skipped) skipped_reason = r.reason;
      if (r.state == State::Failed || r.state == State::Unchecked || r.state == State::Mistrusted) {
        pack_failed += r.state != State::Mistrusted;
        fmt::print("{:<10}  {}/{}  {}\n            {}\n", state_name(r.state), r.pack, r.layer, r.line, r.reason);
      }
    }
    fmt::print("{:<12} {} layers, {}\n", p, pack_layers, pack_failed ? fmt::format("{} FAILED", pack_failed) : std::string("ok"));
  }
  int total = 0;
  for (int c : counts) total += c;
  const int checked = total - counts[int(State::Skipped)] - counts[int(State::Unsupported)];
  fmt::print("golden on {}: {} layers in {} packs: {} passed ({} explained by the judge), {} failed, {} mistrusted, {} unchecked, "
             "{} skipped, {} unsupported\n",
             o.backend, total, packs.size(), counts[int(State::Passed)], explained, counts[int(State::Failed)],
             counts[int(State::Mistrusted)], counts[int(State::Unchecked)], counts[int(State::Skipped)],
             counts[int(State::Unsupported)]);
  if (checked == 0) fmt::print("NOTHING CHECKED: every layer was skipped or unsupported ({})\n", skipped_reason);
  return verdict_exit_code(checked, counts[int(State::Failed)] + counts[int(State::Unchecked)], structural);
}

// Regenerates every pack beside the old ones, reports what moved, then swaps them in (golden.h:
// a kill at any point leaves the old packs, or a journal that the next update finishes).
int update(Options o) {
  o.root = golden_root(o);
  const std::string fresh = o.root + "/.update";
  if (finish_golden_swap(o.root, fresh)) fmt::print("finished the swap of an interrupted update\n");
  fs::remove_all(fresh);
  write_golden_packs(fresh);
  std::vector<std::string> unchanged;
  for (const auto& e : fs::directory_iterator(fresh)) {
    const std::string name = e.path().filename().string(), current = o.root + "/" + name;
    if (!fs::exists(current + "/manifest.json")) {
      fmt::print("{}: new pack\n", name);
      continue;
    }
    const CompareResult r = compare_dumps(read_dump(current), read_dump(e.path().string()), CompareOptions{});
    int moved = 0;
    for (const LayerReport& l : r.layers) {
      bool identical = !l.verdict.outputs.empty();
      for (const OutputVerdict& t : l.verdict.outputs) identical = identical && t.identical;
      if (identical) continue;
      ++moved;
      const TensorDiff* w = l.worst();
      fmt::print("{}/{}: moved, max abs {:.3g}{}\n", name, l.name, w ? w->max_abs : 0.0, l.structural() ? " (" + l.reason + ")" : "");
    }
    fmt::print("{}: {} of {} layers moved\n", name, moved, r.layers.size());
    // Every tensor the same: the pack stays as it is, so a review sees only what moved (not
    // manifests rewritten in a newer format).
    if (moved == 0 && r.structural == 0 && r.layers.size() == read_dump(current).layers.size()) unchanged.push_back(name);
  }
  for (const std::string& name : unchanged) fs::remove_all(fresh + "/" + name);
  if (!unchanged.empty()) fmt::print("{} unchanged pack{} kept as they are\n", unchanged.size(), unchanged.size() == 1 ? "" : "s");
  swap_in_golden_packs(o.root, fresh);
  fmt::print("golden packs written to {}; review with git diff --stat {}\n", o.root, o.root);
  return kPassed;
}

}  // namespace

Command add_golden_command(CLI::App& parent) {
  auto o = std::make_shared<Options>();
  CLI::App* app = parent.add_subcommand(
      "golden", "Check a backend against the golden packs (checked-in inputs and expected outputs), or regenerate them");
  app->require_subcommand(1);
  CLI::App* chk = app->add_subcommand("check", "Run every layer of every pack on a backend and compare with the expected outputs");
  chk->add_option("--backend", o->backend, backend_choices())->capture_default_str();
  const auto load_plugins = add_backend_plugin_flag(chk);
  chk->add_option("--pack", o->pack, "only this pack (conv2d, silu, cat, nonzero, index, nms, yolov5n_128)");
  CLI::App* upd = app->add_subcommand(
      "update", "Regenerate the packs and print which layers moved and by how much, for a reviewer to accept (commit) or "
                "reject (git checkout golden/)");
  for (CLI::App* sub : {chk, upd}) {
    sub->add_option("--root", o->root, "the golden folder (default: ./golden, else the source tree's golden/)")->type_name("DIR");
  }
  chk->footer(kExitCodeFooter);
  // Else the root's footer: its 1, 2 and 4 are check's verdicts, which update never gives.
  app->footer("Run 'parity golden check --help' or 'parity golden update --help' for their options and exit codes.");
  upd->footer(kNoVerdictFooter);
  return {app, [o, chk, load_plugins] {
            if (!chk->parsed()) return update(*o);
            load_plugins();
            return check(*o);
          }};
}

}  // namespace parity::cli
