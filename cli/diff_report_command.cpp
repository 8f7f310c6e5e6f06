// parity diff-report BEFORE AFTER: which layers got better or worse between two reports of
// `parity compare --json`, taken before and after a kernel change, the biggest worsening first.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/json_nesting.h"

namespace parity::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// err/tol values below this count as this: a tenth of the tolerance is rounding that no kernel
// change makes matter, and without a floor 0 -> 0.001 would be an infinite worsening.
constexpr double kFloor = 0.1;

struct Options {
  std::string before, after, json;
  double threshold = 2;
  bool all = false;
};

// One layer of a report, reduced to what the diff needs.
struct Layer {
  std::string name, op, params, state;
  int64_t occurrence = 0;
  bool origin = false;
  double err_over_tol = 0;                                       // worst over outputs; +inf when unmeasurable
  double out_fraction = std::numeric_limits<double>::quiet_NaN();  // NaN: no element-wise figures
};

struct Report {
  std::string path, a, b, model;
  std::vector<Layer> layers;
};

// ---- reading -------------------------------------------------------------------------------

[[noreturn]] void not_a_report(const std::string& path, const std::string& why) {
  throw Error("not a parity compare report (" + why + "); write one with 'parity compare A B --json FILE'").file(path);
}

// compare's JSON report is a few KB per layer: this holds a hundred thousand layers.
constexpr size_t kMaxReportBytes = size_t(1) << 30;

json parse_file(const std::string& path) {
  if (fs::is_directory(path)) throw Error("is a folder, not a JSON report").file(path);
  const std::string text = read_json_file(path, kMaxReportBytes);
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    // nlohmann's own message is several clauses long; the byte offset is what helps.
    throw Error(fmt::format("not JSON (syntax error at byte {})", e.byte)).file(path);
  }
}

// obj[key] checked to be of the kind `is` accepts; a report missing it is not one of compare's.
const json& field(const json& obj, const char* key, bool (json::*is)() const noexcept, const char* kind, const std::string& where,
                  const std::string& path) {
  const auto it = obj.find(key);
  if (it == obj.end() || !((*it).*is)()) not_a_report(path, fmt::format("{}\"{}\" missing or not {}", where, key, kind));
  return *it;
}

std::string text_field(const json& o, const char* key, const std::string& where, const std::string& path) {
  return field(o, key, &json::is_string, "a string", where, path).get<std::string>();
}
int64_t int_field(const json& o, const char* key, const std::string& where, const std::string& path) {
  return field(o, key, &json::is_number_integer, "an integer", where, path).get<int64_t>();
}
bool bool_field(const json& o, const char* key, const std::string& where, const std::string& path) {
  return field(o, key, &json::is_boolean, "true or false", where, path).get<bool>();
}
// compare writes NaN and infinities as the strings "nan", "inf" and "-inf" (JSON has no such numbers).
double figure_field(const json& o, const char* key, const std::string& where, const std::string& path) {
  const auto it = o.find(key);
  if (it != o.end() && it->is_number()) return it->get<double>();
  if (it != o.end() && it->is_string()) {
    const std::string s = it->get<std::string>();
    if (s == "inf") return kInf;
    if (s == "-inf") return -kInf;
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  }
  not_a_report(path, fmt::format("{}\"{}\" missing or not a number", where, key));
}

// How far one output is from its tolerance: |A - B| / tolerance at its worst element (compare
// picks the element with the largest excess over its tolerance), above 1 beyond tolerance.
double output_err_over_tol(const json& o, bool layer_passed, const std::string& where, const std::string& path) {
  if (bool_field(o, "identical", where, path)) return 0;
  const int64_t count = int_field(o, "count", where, path), bad = int_field(o, "out_of_tolerance", where, path);
  const bool beyond = text_field(o, "elementwise", where, path) == "beyond tolerance";
  // Not identical and no element compared: the sides' shapes or dtypes differ.
  if (count == 0 && bad == 0 && beyond) return kInf;
  const double tol = figure_field(o, "tolerance_at_worst", where, path);
  if (tol > 0) {
    const double e = std::fabs(figure_field(o, "worst_a", where, path) - figure_field(o, "worst_b", where, path)) / tol;
    return std::isfinite(e) ? e : kInf;
  }
  // Integers, bools, NaN/Inf positions or an exact tolerance have no ratio: differing elements
  // are as far off as it gets, unless the layer's own check accepted them (another valid nms
  // or argsort answer).
  if (bad > 0) return layer_passed ? 0 : kInf;
  return 0;
}

const char* const kStates[] = {"PASSED", "FAILED", "PROPAGATED", "MISTRUSTED", "SKIPPED", "UNSUPPORTED", "UNCHECKED"};

Layer read_layer(const json& l, size_t i, const std::string& path) {
  if (!l.is_object()) not_a_report(path, fmt::format("layer {} is not an object", i));
  Layer r;
  r.name = text_field(l, "name", fmt::format("layer {}: ", i), path);
  const std::string where = fmt::format("layer {} ({}): ", i, r.name);
  r.state = text_field(l, "state", where, path);
  if (std::find(std::begin(kStates), std::end(kStates), r.state) == std::end(kStates)) {
    not_a_report(path, where + "unknown state \"" + r.state + "\"");
  }
  // Reports written before these fields existed still diff: one occurrence, no origin.
  if (l.contains("occurrence")) r.occurrence = int_field(l, "occurrence", where, path);
  if (l.contains("origin")) r.origin = bool_field(l, "origin", where, path);
  if (l.contains("op")) r.op = text_field(l, "op", where, path);
  if (l.contains("params")) r.params = text_field(l, "params", where, path);
  const json& outputs = field(l, "outputs", &json::is_array, "a list", where, path);
  const bool passed = r.state == "PASSED";
  int64_t bad = 0, count = 0;
  for (const json& o : outputs) {
    if (!o.is_object()) not_a_report(path, where + "an output is not an object");
    r.err_over_tol = std::max(r.err_over_tol, output_err_over_tol(o, passed, where, path));
    bad += int_field(o, "out_of_tolerance", where, path);
    count += int_field(o, "count", where, path);
  }
  if (count > 0) r.out_fraction = double(bad) / double(count);
  // A layer judged without outputs (missing on one side, another call) is as far off as it gets.
  if (outputs.empty() && !passed) r.err_over_tol = kInf;
  return r;
}

// compare's header text is "<dir> (<model> on <backend>, <device>, seed <n>)"; "" when the
// text is not of that form or the manifest named no model, and the model is then not checked.
std::string model_of(const std::string& side) {
  const size_t open = side.rfind(" (");
  if (open == std::string::npos) return "";
  const size_t on = side.find(" on ", open);
  if (on == std::string::npos) return "";
  const std::string m = side.substr(open + 2, on - open - 2);
  return m == "-" ? "" : m;
}

Report read_report(const std::string& path) {
  const json j = parse_file(path);
  if (!j.is_object()) not_a_report(path, "not a JSON object");
  Report r;
  r.path = path;
  r.a = text_field(j, "a", "", path);
  r.b = text_field(j, "b", "", path);
  r.model = model_of(r.a);
  text_field(j, "summary", "", path);  // every compare report has one; other JSON rarely does
  const json& layers = field(j, "layers", &json::is_array, "a list", "", path);
  std::map<std::pair<std::string, int64_t>, size_t> seen;
  for (size_t i = 0; i < layers.size(); ++i) {
    r.layers.push_back(read_layer(layers[i], i, path));
    const Layer& l = r.layers.back();
    if (!seen.emplace(std::make_pair(l.name, l.occurrence), i).second) {
      not_a_report(path, fmt::format("layer {} ({}, occurrence {}) appears twice", i, l.name, l.occurrence));
    }
  }
  return r;
}

// ---- diffing -------------------------------------------------------------------------------

enum class Change { Worse, Unchanged, Better };

struct LayerDiff {
  const Layer* before;
  const Layer* after;
  int state_step;  // > 0: the state got worse
  double factor;   // err/tol after over before, both floored at kFloor
  Change change;
};

struct Diff {
  std::vector<LayerDiff> layers;  // the biggest worsening first
  std::vector<const Layer*> only_before, only_after;
  int worse = 0, better = 0, unchanged = 0;
  std::map<std::string, int> state_changes;  // "PASSED -> FAILED*": how many layers
};

// How bad a state is: an origin (the layer itself is defective) is worse than a layer that only
// fails because its inputs differ, which is worse than one that could not be checked.
int severity(const Layer& l) {
  if (l.state == "PASSED") return 0;
  if (l.state == "UNCHECKED") return 2;
  if (l.state == "PROPAGATED") return 3;  // FAILED before PROPAGATED had its own word
  if (l.state == "FAILED") return l.origin ? 4 : 3;
  return 1;  // MISTRUSTED, SKIPPED, UNSUPPORTED: agreeing, or not judged
}

std::string state_text(const Layer& l) { return l.state + (l.origin ? "*" : ""); }

std::string layer_text(const Layer& l) { return l.occurrence > 0 ? fmt::format("{}#{}", l.name, l.occurrence) : l.name; }

double change_factor(double before, double after) {
  if (std::isinf(before) && std::isinf(after)) return 1;  // both unmeasurable: no change to tell
  return std::max(after, kFloor) / std::max(before, kFloor);
}

LayerDiff diff_layer(const Layer& before, const Layer& after, double threshold) {
  LayerDiff d{&before, &after, severity(after) - severity(before), change_factor(before.err_over_tol, after.err_over_tol),
              Change::Unchanged};
  // The state decides when it changed; the error only tells within one state.
  if (d.state_step != 0) {
    d.change = d.state_step > 0 ? Change::Worse : Change::Better;
  } else if (d.factor > threshold) {
    d.change = Change::Worse;
  } else if (d.factor < 1 / threshold) {
    d.change = Change::Better;
  }
  return d;
}

// Same model, and mostly the same calls: a diff of reports on other shapes would only say that
// every layer changed.
void check_comparable(const Report& before, const Report& after, const Diff& d) {
  if (!before.model.empty() && !after.model.empty() && before.model != after.model) {
    throw Error(fmt::format("a report on {}, but {} is a report on {}; diff-report needs two reports of one model", after.model,
                            before.path, before.model))
        .file(after.path);
  }
  if (d.layers.empty()) throw Error("no layer in common with " + before.path + " (layers pair by name and occurrence)").file(after.path);
  size_t same = 0;
  for (const LayerDiff& l : d.layers) same += l.before->params == l.after->params;
  if (2 * same < d.layers.size()) {
    throw Error(fmt::format("only {} of the {} layers in common with {} run the same call (another image size or batch?)", same,
                            d.layers.size(), before.path))
        .file(after.path);
  }
}

Diff diff_reports(const Report& before, const Report& after, double threshold) {
  Diff d;
  std::map<std::pair<std::string, int64_t>, const Layer*> in_before;
  for (const Layer& l : before.layers) in_before[{l.name, l.occurrence}] = &l;
  std::map<std::pair<std::string, int64_t>, const Layer*> in_after;
  for (const Layer& l : after.layers) {
    in_after[{l.name, l.occurrence}] = &l;
    const auto it = in_before.find({l.name, l.occurrence});
    if (it == in_before.end()) {
      d.only_after.push_back(&l);
    } else {
      d.layers.push_back(diff_layer(*it->second, l, threshold));
    }
  }
  for (const Layer& l : before.layers) {
    if (!in_after.count({l.name, l.occurrence})) d.only_before.push_back(&l);
  }
  check_comparable(before, after, d);
  // Stable: among equal changes the layers stay in model order.
  std::stable_sort(d.layers.begin(), d.layers.end(), [](const LayerDiff& x, const LayerDiff& y) {
    return x.state_step != y.state_step ? x.state_step > y.state_step : x.factor > y.factor;
  });
  for (const LayerDiff& l : d.layers) {
    (l.change == Change::Worse ? d.worse : l.change == Change::Better ? d.better : d.unchanged) += 1;
    if (l.state_step != 0) ++d.state_changes[state_text(*l.before) + " -> " + state_text(*l.after)];
  }
  return d;
}

// ---- presenting ----------------------------------------------------------------------------

std::string ratio_text(double e) { return std::isinf(e) ? "inf" : e == 0 ? "0" : fmt::format("{:.3g}", e); }

std::string percent_text(double f) { return std::isnan(f) ? "-" : f == 0 ? "0" : fmt::format("{:.3g}", 100 * f); }

std::string factor_text(const LayerDiff& d) {
  if (std::isinf(d.factor)) return "x inf";
  if (d.factor == 0) return "x 0";
  return fmt::format("x {:.2g}", d.factor);
}

const char* change_name(Change c) { return c == Change::Worse ? "worse" : c == Change::Better ? "better" : "same"; }

std::string summary_line(const Diff& d, const Report& before, const Report& after) {
  std::string s = fmt::format("{} layers in both: {} worse, {} better, {} unchanged", d.layers.size(), d.worse, d.better, d.unchanged);
  int changes = 0;
  std::string which;
  for (const auto& [change, n] : d.state_changes) {
    changes += n;
    which += fmt::format("{}{} {}", which.empty() ? "" : ", ", n, change);
  }
  s += fmt::format("; {} state changes{}", changes, which.empty() ? "" : " (" + which + ")");
  if (!d.only_before.empty()) s += fmt::format("; {} only in {}", d.only_before.size(), before.path);
  if (!d.only_after.empty()) s += fmt::format("; {} only in {}", d.only_after.size(), after.path);
  return s;
}

void print_table(const Diff& d, bool all) {
  std::vector<std::vector<std::string>> rows = {{"change", "state before -> after", "err/tol before -> after", "factor", "% out before -> after", "layer"}};
  for (const LayerDiff& l : d.layers) {
    if (!all && l.change == Change::Unchanged) continue;
    // A state that did not change is written once, so the arrows stand out.
    const std::string before = state_text(*l.before), after = state_text(*l.after);
    rows.push_back({change_name(l.change), before == after ? after : before + " -> " + after,
                    ratio_text(l.before->err_over_tol) + " -> " + ratio_text(l.after->err_over_tol), factor_text(l),
                    percent_text(l.before->out_fraction) + " -> " + percent_text(l.after->out_fraction), layer_text(*l.after)});
  }
  if (rows.size() == 1) return;  // nothing changed: the summary says so
  std::vector<size_t> w(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t k = 0; k < row.size(); ++k) w[k] = std::max(w[k], row[k].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t k = 0; k < row.size(); ++k) {
      const bool last = k + 1 == row.size();
      line += (k ? "  " : "") + (last ? row[k] : fmt::format("{:<{}}", row[k], w[k]));
    }
    fmt::print("{}\n", line);
  }
}

// At most `limit` names, then how many more: a report filtered with --layers can leave
// a hundred layers on one side.
std::string names_text(const std::vector<const Layer*>& layers, size_t limit) {
  std::string s;
  for (size_t i = 0; i < layers.size() && i < limit; ++i) s += (i ? ", " : "") + layer_text(*layers[i]);
  if (layers.size() > limit) s += fmt::format(" and {} more", layers.size() - limit);
  return s;
}

json number(double v) { return std::isfinite(v) ? json(v) : json(std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf"); }

json layer_json(const Layer& l) { return {{"name", l.name}, {"occurrence", l.occurrence}, {"op", l.op}, {"state", l.state}, {"origin", l.origin}}; }

void write_diff_json(const std::string& path, const Diff& d, const Report& before, const Report& after, double threshold,
                     const std::string& summary) {
  json layers = json::array();
  for (const LayerDiff& l : d.layers) {
    const Layer &b = *l.before, &a = *l.after;
    layers.push_back({{"name", a.name}, {"occurrence", a.occurrence}, {"op", a.op}, {"change", change_name(l.change)},
                      {"state_before", b.state}, {"origin_before", b.origin}, {"state_after", a.state}, {"origin_after", a.origin},
                      {"err_over_tol_before", number(b.err_over_tol)}, {"err_over_tol_after", number(a.err_over_tol)},
                      {"factor", number(l.factor)},
                      {"out_of_tolerance_before", std::isnan(b.out_fraction) ? json(nullptr) : json(b.out_fraction)},
                      {"out_of_tolerance_after", std::isnan(a.out_fraction) ? json(nullptr) : json(a.out_fraction)}});
  }
  json only_before = json::array(), only_after = json::array();
  for (const Layer* l : d.only_before) only_before.push_back(layer_json(*l));
  for (const Layer* l : d.only_after) only_after.push_back(layer_json(*l));
  const json j = {{"before", {{"path", before.path}, {"a", before.a}, {"b", before.b}}},
                  {"after", {{"path", after.path}, {"a", after.a}, {"b", after.b}}},
                  {"threshold", threshold}, {"floor", kFloor}, {"summary", summary},
                  {"worse", d.worse}, {"better", d.better}, {"unchanged", d.unchanged}, {"state_changes", d.state_changes},
                  {"layers", layers}, {"only_in_before", only_before}, {"only_in_after", only_after}};
  write_file_atomically(path, j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

int run_diff_report(const Options& o) {
  const Report before = read_report(o.before), after = read_report(o.after);
  const Diff d = diff_reports(before, after, o.threshold);
  fmt::print("before: {}: A {}, B {}\n", before.path, before.a, before.b);
  fmt::print("after:  {}: A {}, B {}\n", after.path, after.a, after.b);
  print_table(d, o.all);
  if (!d.only_before.empty()) fmt::print("only in {}: {}\n", before.path, names_text(d.only_before, 10));
  if (!d.only_after.empty()) fmt::print("only in {}: {}\n", after.path, names_text(d.only_after, 10));
  const std::string summary = summary_line(d, before, after);
  fmt::print("{}\n", summary);
  if (!o.json.empty()) write_diff_json(o.json, d, before, after, o.threshold, summary);
  return d.worse > 0 ? kNumericMismatch : kPassed;
}

}  // namespace

Command add_diff_report_command(CLI::App& parent) {
  auto opts = std::make_shared<Options>();
  CLI::App* app = parent.add_subcommand(
      "diff-report",
      "Which layers got better or worse between two reports of 'parity compare --json' (before and after a kernel "
      "change), the biggest worsening first");
  app->add_option("before", opts->before, "the report taken before the change")->required();
  app->add_option("after", opts->after, "the report taken after it")->required();
  app->add_option("--json", opts->json, "also write the diff here as JSON");
  app->add_option("--threshold", opts->threshold, "err/tol changing by less than this factor counts as unchanged")
      ->check(at_least(1))
      ->capture_default_str();
  app->add_flag("--all", opts->all, "also list the layers that did not change");
  app->footer(
      "Layers pair by name and occurrence. A layer is worse when its state got worse (PASSED < MISTRUSTED,\n"
      "SKIPPED, UNSUPPORTED < UNCHECKED < PROPAGATED or FAILED < FAILED*, an origin), or, in the same state, when its\n"
      "err/tol grew by more than a factor of --threshold; better the other way round.\n"
      "err/tol is |A - B| / tolerance at the layer's worst element (the one furthest beyond its tolerance),\n"
      "the largest over its outputs: unlike max abs or max rel it says how far from failing a layer is, on\n"
      "every layer's own tolerance (conv2d's per-element bound included), 1 being the limit. inf: an\n"
      "output of another shape, differing integers or NaN/Inf positions on a layer that did not pass,\n"
      "or a layer missing on one side. Values below 0.1 count as 0.1: a tenth of the tolerance is\n"
      "rounding, and its changes are noise. '% out' (the share of elements beyond tolerance) is shown\n"
      "alongside: it tells one bad element from a whole bad output.\n"
      "Exit codes: 0 no layer got worse, 1 some layer got worse, 3 usage or bad input (a missing file, not\n"
      "JSON, not a compare report, reports of different models or shapes).");
  return {app, [opts] { return run_diff_report(*opts); }};
}

}  // namespace parity::cli
