#pragma once
// parity compare a.npy b.npy: two single tensors, the quick "is my output right" question, with
// the metrics and tolerance policy of a dump compare.
#include <string>
#include <vector>

namespace parity::cli {

struct NpyCompareOptions {
  std::string a, b;                 // A, the expected tensor; B, the one under test
  double atol = -1, rtol = -1;      // both given, or neither (-1)
  std::string op;                   // the call that produced them: its tolerance (conv2d's bound needs `inputs`)
  std::vector<std::string> inputs;  // that call's input files, in its order
  std::string precision = "fp32";
  std::string json;                 // write the verdict as JSON here
};

// True when both paths name .npy files (not dump folders).
bool are_npy_files(const std::string& a, const std::string& b);
// Prints the verdict; returns the exit code (0 within tolerance, 1 beyond, 2 another shape or dtype).
int compare_npy_files(const NpyCompareOptions& o);

}  // namespace parity::cli
