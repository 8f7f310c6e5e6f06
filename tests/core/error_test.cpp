#include "core/error.h"

#include <gtest/gtest.h>

#include <string>

namespace parity {
namespace {

TEST(Error, RendersContextOnOneLine) {
  Error e("bad thing\nhappened");
  e.file("dump/x.npy").layer("model.0.conv").shape("1x3x8x8");
  EXPECT_EQ(std::string(e.what()), "dump/x.npy: layer model.0.conv: bad thing happened (shape 1x3x8x8)");
  EXPECT_EQ(e.message(), "bad thing happened");
}

TEST(Error, InnermostContextWins) {
  try {
    try {
      throw Error("truncated data").file("inner.npy");
    } catch (Error& e) {
      e.file("outer.npy").layer("model.2");
      throw;
    }
  } catch (const Error& e) {
    EXPECT_EQ(e.file_path(), "inner.npy");
    EXPECT_EQ(std::string(e.what()), "inner.npy: layer model.2: truncated data");
  }
}

}  // namespace
}  // namespace parity
