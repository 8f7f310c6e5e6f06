// .npy interop with numpy itself (/usr/bin/python3 + numpy; skipped with the reason otherwise):
// numpy writes and parity reads, parity writes and numpy reads, and `parity inspect` reports
// the statistics numpy computes. The value pattern is written here and, independently, in
// tests/numpy/npy_interop.py.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/npy.h"
#include "core/stats.h"
#include "support/test_support.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

#define SKIP_WITHOUT_NUMPY()                                               \
  do {                                                                     \
    if (const std::string why = test::numpy_unavailable_reason(); !why.empty()) GTEST_SKIP() << why; \
  } while (0)

// Element i of the interop pattern, as a double; float specials at i = 3..6 (+inf, -inf, nan, -0).
template <typename T> T pattern_value(int64_t i) {
  if constexpr (std::is_same_v<T, bool>) {
    return i % 3 == 0;
  } else if constexpr (std::is_same_v<T, uint8_t>) {
    return uint8_t((i * 7 + 3) % 256);
  } else if constexpr (std::is_same_v<T, int32_t>) {
    return int32_t(uint32_t(uint64_t(i) * 2654435761u));
  } else if constexpr (std::is_same_v<T, int64_t>) {
    return int64_t(uint64_t(i) * 0x9E3779B97F4A7C15ull);
  } else {
    double v = double((i * 37) % 101 - 50) / 8.0;
    if (i == 3) v = INFINITY;
    if (i == 4) v = -INFINITY;
    if (i == 5) v = NAN;
    if (i == 6) v = -0.0;
    if constexpr (std::is_same_v<T, Half>) {
      return float_to_half(float(v));
    } else {
      return T(v);
    }
  }
}

Tensor pattern_tensor(DType dt, const Shape& shape) {
  Tensor t(dt, shape);
  visit_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    T* p = t.mutable_data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = pattern_value<T>(i);
  });
  return t;
}

// Bitwise equality, except that any NaN matches any NaN (numpy and C++ may pick other payloads).
void expect_pattern(const Tensor& t, const std::string& name) {
  const Tensor want = pattern_tensor(t.dtype(), t.shape());
  const size_t item = dtype_size(t.dtype());
  for (int64_t i = 0; i < t.numel(); ++i) {
    const bool both_nan = is_floating(t.dtype()) && std::isnan(element_as_double(t, i)) &&
                          std::isnan(element_as_double(want, i));
    if (both_nan) continue;
    ASSERT_EQ(std::memcmp(t.bytes() + i * item, want.bytes() + i * item, item), 0)
        << name << " element " << i << ": " << element_as_double(t, i) << " vs " << element_as_double(want, i);
  }
}

struct NameParts {
  DType dtype;
  Shape shape;
  int version;
};

NameParts parse_name(const std::string& file) {
  const std::string stem = file.substr(0, file.size() - 4);
  const size_t a = stem.find("__"), b = stem.rfind("__");
  return {*dtype_from_name(stem.substr(0, a)), Shape::parse(stem.substr(a + 2, b - a - 2)),
          std::stoi(stem.substr(b + 3))};
}

TEST(NumpyInterop, NumpyWritesParityReads) {
  SKIP_WITHOUT_NUMPY();
  test::TempDir dir;
  const auto w = test::run_numpy_script("npy_interop.py", {"write", dir.path()});
  ASSERT_EQ(w.exit_code, 0) << w.out << w.err;
  int files = 0, versions_seen = 0, mapped = 0;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    const std::string name = entry.path().filename().string();
    const NameParts parts = parse_name(name);
    NpyInfo info;
    const Tensor t = read_npy(entry.path().string(), {}, &info);
    EXPECT_EQ(t.dtype(), parts.dtype) << name;
    EXPECT_EQ(t.shape(), parts.shape) << name;
    EXPECT_EQ(info.major, parts.version) << name;
    versions_seen |= 1 << info.major;
    mapped += info.mapped;
    expect_pattern(t, name);
    ++files;
  }
  EXPECT_EQ(files, 7 * 8 + 7 * 2 + 1);  // every dtype x shape, v2 and v3 of 3x4, one large file
  EXPECT_EQ(versions_seen, 0b1110);
  EXPECT_EQ(mapped, 1);
}

TEST(NumpyInterop, ParityWritesNumpyReads) {
  SKIP_WITHOUT_NUMPY();
  test::TempDir dir;
  const std::vector<Shape> shapes = {Shape(), Shape{0}, Shape{5}, Shape{3, 4}, Shape{2, 0, 3}, Shape{2, 3, 4, 5},
                                     Shape{1, 2, 1, 3, 1, 2}, Shape{17, 19, 23}};
  int files = 0;
  for (DType dt : kAllDTypes) {
    for (const Shape& s : shapes) {
      write_npy(dir.file(std::string(dtype_name(dt)) + "__" + s.str() + "__v1.npy"), pattern_tensor(dt, s));
      ++files;
    }
  }
  const auto r = test::run_numpy_script("npy_interop.py", {"check", dir.path()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("checked " + std::to_string(files) + " files, 0 failures"), std::string::npos) << r.out;
}

// `parity inspect` prints numpy's min, max and mean (float64 accumulation) to 6 significant
// digits; its JSON carries them to full precision.
TEST(NumpyInterop, InspectMatchesNumpyStatistics) {
  SKIP_WITHOUT_NUMPY();
  test::TempDir dir;
  const auto s = test::run_numpy_script("npy_interop.py", {"stats", dir.path()});
  ASSERT_EQ(s.exit_code, 0) << s.out << s.err;
  const auto expected = nlohmann::json::parse(test::read_text(dir.file("expected.json")));

  const auto text = test::run_parity({"inspect", dir.file("big.npy")});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  int found = 0;
  for (const std::string& line : test::lines_of(text.out)) {
    for (const char* key : {"min", "max", "mean", "std"}) {
      const std::string prefix = std::string("  ") + key + " ";
      if (line.rfind(prefix, 0) != 0) continue;
      const double printed = std::stod(line.substr(prefix.size()));
      const double numpy = expected[key].get<double>();
      EXPECT_LE(std::fabs(printed - numpy), 5e-7 * std::fabs(numpy)) << key << ": parity " << line << ", numpy " << numpy;
      ++found;
    }
  }
  EXPECT_EQ(found, 4) << text.out;

  const auto js = test::run_parity({"inspect", "--json", dir.file("big.npy")});
  ASSERT_EQ(js.exit_code, 0) << js.err;
  const auto j = nlohmann::json::parse(js.out);
  EXPECT_EQ(j["min"].get<double>(), expected["min"].get<double>());
  EXPECT_EQ(j["max"].get<double>(), expected["max"].get<double>());
  EXPECT_NEAR(j["mean"].get<double>(), expected["mean"].get<double>(), 1e-12 * std::fabs(expected["mean"].get<double>()));
  EXPECT_NEAR(j["std"].get<double>(), expected["std"].get<double>(), 1e-12 * expected["std"].get<double>());
  EXPECT_TRUE(j["mapped"].get<bool>());
}

// Every file of a dump written by `parity run` loads in numpy as its manifest describes it.
TEST(NumpyInterop, EveryDumpFileLoadsInNumpy) {
  SKIP_WITHOUT_NUMPY();
  test::TempDir dir;
  const auto r = test::run_parity({"run", "yolov5n", "--img", "192", "--dump", dir.file("d")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto c = test::run_numpy_script("check_dump.py", {dir.file("d")});
  EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
  EXPECT_NE(c.out.find("157 layers"), std::string::npos) << c.out;
}

}  // namespace
}  // namespace parity
