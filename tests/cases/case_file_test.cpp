#include "cases/case_file.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "support/test_support.h"

namespace parity {
namespace {

TEST(CaseFile, ParsesCommentsFieldsAndPrintsCanonically) {
  test::TempDir dir;
  test::write_bytes(dir.file("a.cases"),
                    "# a comment\n"
                    "\n"
                    "conv2d   x=1x3x640x640 w=32x3x6x6 pad=2 stride=2 bias name=model.0.conv  # trailing comment\n"
                    "nonzero x=20x300 density=0.25 name=val.where\n"
                    "silu x=8 inferred\n");
  const std::vector<Case> cases = read_case_file(dir.file("a.cases"));
  ASSERT_EQ(cases.size(), 3u);
  EXPECT_EQ(cases[0].str(), "conv2d x=1x3x640x640 w=32x3x6x6 bias stride=2 pad=2 name=model.0.conv");
  EXPECT_EQ(cases[0].where, dir.file("a.cases") + ":3");
  EXPECT_EQ(cases[1].density, 0.25);
  EXPECT_EQ(cases[1].str(), "nonzero x=20x300 name=val.where density=0.25");
  EXPECT_EQ(cases[2].name, "case5");  // unnamed: named after its line
  EXPECT_TRUE(cases[2].inferred);
  // Writing and reading back gives the same cases.
  write_case_file(dir.file("b.cases"), cases, {"header"});
  const std::vector<Case> again = read_case_file(dir.file("b.cases"));
  ASSERT_EQ(again.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(again[i].str(), cases[i].str());
}

TEST(CaseFile, ErrorsNameTheFileLineAndField) {
  test::TempDir dir;
  const struct {
    const char* line;
    const char* why;
  } bad[] = {
      {"conv2d x=1x3x8x8 w=4x3x3x3 stride=two", "field stride=two: not an integer"},
      {"conv5d x=1", "unknown op 'conv5d'"},
      {"silu x=1x-3", "negative dimension"},
      {"silu x=4 density=2", "density=2"},
      {"name=only", "no op"},
      {"silu x=4 colour=red", "unknown field 'colour'"},
  };
  for (const auto& b : bad) {
    test::write_bytes(dir.file("bad.cases"), std::string("# ok\nsilu x=3\n") + b.line + "\n");
    try {
      read_case_file(dir.file("bad.cases"));
      ADD_FAILURE() << b.line;
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind(dir.file("bad.cases") + ":3: ", 0), 0u) << what;
      EXPECT_NE(what.find(b.why), std::string::npos) << what;
    }
  }
  EXPECT_THROW(read_case_file(dir.file("missing.cases")), Error);
}

}  // namespace
}  // namespace parity
