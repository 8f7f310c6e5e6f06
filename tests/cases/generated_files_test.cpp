// The checked-in cases/*.cases are exactly what `parity cases generate` writes: nobody edits
// them by hand, and a change to the architecture code shows up as a failing test until the
// files are regenerated.
#include <gtest/gtest.h>

#include "cases/case_file.h"
#include "cases/yolov5.h"

namespace parity {
namespace {

TEST(GeneratedCaseFiles, MatchTheGenerator) {
  for (const std::string& model : yolov5_variant_names()) {
    for (const int64_t batch : {int64_t(1), int64_t(32)}) {
      const std::string file =
          std::string(PARITY_SOURCE_DIR) + "/cases/" + model + (batch == 1 ? "" : "-b32") + ".cases";
      SCOPED_TRACE(file);
      std::vector<Case> want = yolov5_forward(yolov5_variant(model), 640, batch);
      const std::vector<Case> post = yolov5_postprocess(640, batch);
      want.insert(want.end(), post.begin(), post.end());
      const std::vector<Case> have = read_case_file(file);
      ASSERT_EQ(have.size(), want.size()) << "regenerate with: parity cases generate";
      for (size_t i = 0; i < have.size(); ++i) ASSERT_EQ(have[i].str(), want[i].str()) << "line of case " << i;
    }
  }
}

}  // namespace
}  // namespace parity
