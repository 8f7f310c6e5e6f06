// parity inspect PATH: what a .npy file holds (dtype, shape, statistics, first values), or one
// line per tensor of a dump folder.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "core/npy.h"
#include "core/printable.h"
#include "core/stats.h"

namespace parity::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Options {
  std::string path;
  int values = 10;
  bool json = false;
};

struct Inspected {
  std::string name;
  Tensor tensor;
  NpyInfo info;
  TensorStats stats;
};

Inspected inspect_file(const std::string& path, std::string name) {
  Inspected r;
  r.name = printable(name);  // a file name may hold control characters: shown escaped
  r.tensor = read_npy(path, {}, &r.info);
  r.stats = compute_stats(r.tensor);
  return r;
}

bool integral(DType dt) { return !is_floating(dt); }

// Statistics as text; integers exactly, floats with 8 significant digits.
std::string fmt_min(const Inspected& r) {
  if (r.stats.finite == 0) return "-";
  return integral(r.tensor.dtype()) ? fmt::format("{}", r.stats.int_min) : fmt::format("{:.8g}", r.stats.min);
}
std::string fmt_max(const Inspected& r) {
  if (r.stats.finite == 0) return "-";
  return integral(r.tensor.dtype()) ? fmt::format("{}", r.stats.int_max) : fmt::format("{:.8g}", r.stats.max);
}
std::string fmt_real(const Inspected& r, double v) {
  return r.stats.finite == 0 ? "-" : fmt::format("{:.8g}", v);
}

std::string fmt_value(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::Bool) return t.data<bool>()[i] ? "True" : "False";
  if (t.dtype() == DType::Int64) return fmt::format("{}", t.data<int64_t>()[i]);
  const double v = element_as_double(t, i);
  return integral(t.dtype()) ? fmt::format("{}", int64_t(v)) : fmt::format("{:.7g}", v);
}

std::string fmt_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) b /= 1024, ++u;
  return u == 0 ? fmt::format("{:.0f} {}", b, units[u]) : fmt::format("{:.2f} {}", b, units[u]);
}

json stats_json(const Inspected& r, int values) {
  const TensorStats& s = r.stats;
  json j;
  j["name"] = r.name;
  j["dtype"] = std::string(dtype_name(r.tensor.dtype()));
  j["shape"] = r.tensor.shape().dims();
  j["numel"] = s.count;
  j["nbytes"] = r.tensor.nbytes();
  j["npy_version"] = fmt::format("{}.{}", r.info.major, r.info.minor);
  j["mapped"] = r.info.mapped;
  auto stat = [&](double v) { return s.finite ? json(v) : json(nullptr); };
  if (integral(r.tensor.dtype())) {
    j["min"] = s.finite ? json(s.int_min) : json(nullptr);
    j["max"] = s.finite ? json(s.int_max) : json(nullptr);
  } else {
    j["min"] = stat(s.min);
    j["max"] = stat(s.max);
  }
  j["mean"] = stat(s.mean);
  j["std"] = stat(s.std);
  j["finite"] = s.finite;
  j["nan"] = s.nan;
  j["posinf"] = s.pos_inf;
  j["neginf"] = s.neg_inf;
  j["zeros"] = s.zeros;
  json first = json::array();
  const int64_t n = std::min<int64_t>(values, r.tensor.numel());
  for (int64_t i = 0; i < n; ++i) {
    const DType dt = r.tensor.dtype();
    if (dt == DType::Bool) {
      first.push_back(r.tensor.data<bool>()[i]);
    } else if (dt == DType::Int64) {
      first.push_back(r.tensor.data<int64_t>()[i]);
    } else {
      const double v = element_as_double(r.tensor, i);
      first.push_back(std::isfinite(v) ? json(v) : json(fmt::format("{}", v)));  // JSON has no NaN
    }
  }
  j["first"] = first;
  return j;
}

void print_file(const Inspected& r, int values) {
  const TensorStats& s = r.stats;
  const Tensor& t = r.tensor;
  fmt::print("{}\n", r.name);
  fmt::print("  dtype   {}\n", dtype_name(t.dtype()));
  fmt::print("  shape   {}  ({} elements, {})\n", t.shape().str(), t.numel(), fmt_bytes(double(t.nbytes())));
  fmt::print("  format  npy {}.{}, data at byte {}, {}\n", r.info.major, r.info.minor, r.info.data_offset,
             r.info.mapped ? "memory-mapped" : "read into memory");
  const bool partial = s.finite != s.count && s.count > 0;
  fmt::print("  min     {}\n  max     {}\n  mean    {}\n  std     {}{}\n", fmt_min(r), fmt_max(r),
             fmt_real(r, s.mean), fmt_real(r, s.std),
             partial ? fmt::format("   (over the {} finite elements)", s.finite) : "");
  fmt::print("  nan {}  +inf {}  -inf {}  zeros {}\n", s.nan, s.pos_inf, s.neg_inf, s.zeros);
  const int64_t n = std::min<int64_t>(values, t.numel());
  if (n > 0) {
    std::string line;
    for (int64_t i = 0; i < n; ++i) line += (i ? ", " : "") + fmt_value(t, i);
    fmt::print("  values  [{}{}]  (first {} of {}, C order)\n", line, n < t.numel() ? ", ..." : "", n,
               t.numel());
  }
}

int inspect_folder(const Options& o) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(o.path)) {
    if (entry.is_regular_file() && entry.path().extension() == ".npy") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  const bool has_manifest = fs::exists(fs::path(o.path) / "manifest.json");

  std::vector<Inspected> rows;
  std::vector<std::string> errors;
  for (const auto& f : files) {
    try {
      rows.push_back(inspect_file(f.string(), f.filename().string()));
    } catch (const Error& e) {
      errors.push_back(e.what());
    }
  }

  if (o.json) {
    json j;
    j["path"] = o.path;
    j["manifest"] = has_manifest;
    j["tensors"] = json::array();
    for (const auto& r : rows) j["tensors"].push_back(stats_json(r, o.values));
    j["errors"] = errors;
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    const std::vector<std::string> head = {"name", "dtype", "shape", "min", "max", "mean", "std", "nan", "inf"};
    std::vector<std::vector<std::string>> table = {head};
    double bytes = 0;
    for (const auto& r : rows) {
      bytes += double(r.tensor.nbytes());
      table.push_back({r.name, std::string(dtype_name(r.tensor.dtype())), r.tensor.shape().str(), fmt_min(r),
                       fmt_max(r), fmt_real(r, r.stats.mean), fmt_real(r, r.stats.std),
                       std::to_string(r.stats.nan), std::to_string(r.stats.pos_inf + r.stats.neg_inf)});
    }
    std::vector<size_t> width(head.size(), 0);
    for (const auto& row : table) {
      for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
    }
    for (const auto& row : table) {
      std::string line;
      for (size_t c = 0; c < row.size(); ++c) {
        // Text columns left-aligned, numbers right-aligned.
        line += c < 3 ? fmt::format("{:<{}}", row[c], width[c]) : fmt::format("{:>{}}", row[c], width[c]);
        if (c + 1 < row.size()) line += "  ";
      }
      fmt::print("{}\n", line);
    }
    fmt::print("{} tensors, {}; {}\n", rows.size(), fmt_bytes(bytes),
               has_manifest ? "manifest.json present"
                            : "no manifest.json (not a complete dump: compare would refuse it)");
  }
  for (const auto& e : errors) std::cerr << "parity inspect: " << e << "\n";
  return errors.empty() ? kPassed : kUsageOrIoError;
}

int run_inspect(const Options& o) {
  std::error_code ec;
  const auto status = fs::status(o.path, ec);
  if (!fs::exists(status)) throw Error("no such file or folder").file(o.path);
  if (fs::is_directory(status)) return inspect_folder(o);
  const Inspected r = inspect_file(o.path, o.path);
  if (o.json) {
    std::cout << stats_json(r, o.values).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    print_file(r, o.values);
  }
  return kPassed;
}

}  // namespace

Command add_inspect_command(CLI::App& parent) {
  auto opts = std::make_shared<Options>();
  CLI::App* app = parent.add_subcommand(
      "inspect",
      "Show what a .npy file holds: dtype, shape, min, max, mean, std, NaN/Inf counts and the "
      "first values; on a folder (a dump), one line per .npy file");
  app->add_option("path", opts->path, "a .npy file, or a folder of them")->required();
  app->add_option("--values", opts->values, "how many leading values to print (C order)")
      ->check(at_least(1))
      ->capture_default_str();
  app->add_flag("--json", opts->json, "print JSON instead of text (NaN/Inf values as strings)");
  app->footer(
      "Statistics are over the finite elements, accumulated in float64; std is the population\n"
      "standard deviation (numpy's default, ddof=0). Exit code 3 when a file cannot be read.");
  return {app, [opts] { return run_inspect(*opts); }};
}

}  // namespace parity::cli
