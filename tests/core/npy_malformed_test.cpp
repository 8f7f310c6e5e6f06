// Every kind of damaged or unsupported .npy file is refused with a one-line parity::Error that
// names the file and the reason. The same files feed the CLI test (exit code 3).
#include <gtest/gtest.h>

#include "core/npy.h"
#include "npy_malformed_cases.h"
#include "support/test_support.h"

namespace parity {
namespace {

TEST(NpyMalformed, EachCaseIsRefusedWithItsReason) {
  test::TempDir dir;
  for (const test::MalformedNpy& c : test::malformed_npy_cases()) {
    SCOPED_TRACE(c.name);
    const std::string path = dir.file(c.name + ".npy");
    test::write_bytes(path, c.bytes);
    for (size_t threshold : {size_t(0), size_t(1) << 30, size_t(7)}) {  // mapped, copied, read whole
      try {
        if (threshold == 7) {
          read_npy_whole(path);
        } else {
          read_npy(path, NpyReadOptions{threshold});
        }
        ADD_FAILURE() << "accepted";
      } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_EQ(what.rfind(path + ": ", 0), 0u) << what;
        EXPECT_NE(what.find(c.reason), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      }
    }
  }
}

TEST(NpyMalformed, MissingFileNamesIt) {
  try {
    read_npy("/nonexistent/x.npy");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/x.npy: cannot open: No such file or directory");
  }
}

// Unusual but valid headers that numpy can write or read are accepted.
TEST(NpyMalformed, ValidVariantsAreAccepted) {
  const std::string data4(4, '\0');
  struct Variant {
    const char* dict;
    Shape shape;
    DType dtype;
  };
  const Variant variants[] = {
      {"{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (1,)}", Shape{1}, DType::Float32},
      {"{'shape': (2, 2), 'fortran_order': False, 'descr': '|u1'}", Shape{2, 2}, DType::UInt8},
      {"{'descr':'<i4','fortran_order':False,'shape':(1L,),}", Shape{1}, DType::Int32},
      {"{'descr': '<f2', 'fortran_order': False, 'shape': (2, ), }", Shape{2}, DType::Float16},
      {"{'descr': '|b1', 'fortran_order': False, 'shape': (0, 3), }", Shape{0, 3}, DType::Bool},
      {"{'descr': '<u1', 'fortran_order': False, 'shape': (4,), }", Shape{4}, DType::UInt8},
  };
  for (const Variant& v : variants) {
    SCOPED_TRACE(v.dict);
    std::string bytes = test::npy_v1(v.dict);
    bytes += std::string(size_t(v.shape.numel()) * dtype_size(v.dtype), '\0');
    const Tensor t = parse_npy(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size(), "v.npy");
    EXPECT_EQ(t.shape(), v.shape);
    EXPECT_EQ(t.dtype(), v.dtype);
  }
}

}  // namespace
}  // namespace parity
