#include "core/atomic_file.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.h"
#include "support/test_support.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

size_t entries(const std::string& dir) {
  return size_t(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

TEST(AtomicFile, CommitReplacesTarget) {
  test::TempDir dir;
  const std::string path = dir.file("manifest.json");
  write_file_atomically(path, "old");
  {
    AtomicFile f(path);
    f.write("new content");
    // Until commit the target still holds the old content and the temporary is hidden.
    EXPECT_EQ(test::read_text(path), "old");
    EXPECT_EQ(fs::path(f.temp_path()).filename().string().front(), '.');
    f.commit();
  }
  EXPECT_EQ(test::read_text(path), "new content");
  EXPECT_EQ(entries(dir.path()), 1u);
}

TEST(AtomicFile, AbandonedWriteLeavesNothing) {
  test::TempDir dir;
  const std::string path = dir.file("x.npy");
  {
    AtomicFile f(path);
    f.write("partial");
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(entries(dir.path()), 0u);

  write_file_atomically(path, "complete");
  try {
    AtomicFile f(path);
    f.write("half of the new");
    throw Error("simulated failure mid-write");
  } catch (const Error&) {
  }
  EXPECT_EQ(test::read_text(path), "complete");
  EXPECT_EQ(entries(dir.path()), 1u);
}

TEST(AtomicFile, UnwritableFolderNamesThePath) {
  try {
    AtomicFile f("/nonexistent-parity-dir/x.npy");
    FAIL() << "expected parity::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-parity-dir/x.npy"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace parity
