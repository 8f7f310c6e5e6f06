// Without libFuzzer (any compiler): feeds every file under the folders given on the command line
// to the target's entry point once, so the seed corpus and the regression inputs of past
// findings run in every ctest. A folder that does not exist is skipped (no finding recorded yet);
// no input at all is an error (exit 3); a finding aborts.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz/fuzz_target.h"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  int total = 0;
  for (int i = 1; i < argc; ++i) {
    std::vector<fs::path> files;
    std::error_code ec;
    if (!fs::exists(argv[i], ec)) {
      std::printf("%s: absent, skipped\n", argv[i]);
      continue;
    }
    for (fs::recursive_directory_iterator it(argv[i], ec), end; !ec && it != end; it.increment(ec)) {
      if (it->is_regular_file()) files.push_back(it->path());
    }
    if (ec) {
      std::fprintf(stderr, "%s: cannot list: %s\n", argv[i], ec.message().c_str());
      return 3;
    }
    for (const fs::path& f : files) {
      std::ifstream in(f, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      ++total;
    }
    std::printf("%s: %zu inputs handled\n", argv[i], files.size());
  }
  if (total == 0) {
    std::fprintf(stderr, "no input files in any folder given\n");
    return 3;
  }
  std::printf("%d inputs, no finding\n", total);
  return 0;
}
