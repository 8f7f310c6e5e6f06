#pragma once
// Exit codes shared by every subcommand (docs/DESIGN.md).
namespace parity::cli {

enum ExitCode : int {
  kPassed = 0,
  kNumericMismatch = 1,     // a numeric difference no input explains, or one that could not be checked
  kStructuralMismatch = 2,  // an unexplained structural one: a missing layer, another call, shape, dtype, count
  kUsageOrIoError = 3,      // bad flag, unreadable or corrupt file, incomplete dump
  kNothingChecked = 4,      // every case SKIPPED or UNSUPPORTED, or a filter matched nothing (ctest: skipped)
};

// The one rule every checking command follows.
inline int verdict_exit_code(int checked, int failed_or_unchecked, int structural_unexplained) {
  if (checked == 0) return kNothingChecked;
  if (structural_unexplained) return kStructuralMismatch;
  return failed_or_unchecked ? kNumericMismatch : kPassed;
}

inline constexpr const char* kExitCodeFooter =
    "Exit codes: 0 everything checked passed, 1 numeric mismatch (or unchecked), 2 unexplained structural mismatch,\n"
    "3 usage, I/O or corrupt dump, 4 nothing was checked (all skipped or unsupported, or a filter matched nothing).";

// For the commands that check nothing (cases, golden update): no verdict, so only 0 and 3.
inline constexpr const char* kNoVerdictFooter = "Exit codes: 0 done, 3 usage or I/O error (a bad flag, an unreadable or malformed file).";

}  // namespace parity::cli
