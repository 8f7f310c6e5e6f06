#pragma once
// Exit codes shared by every subcommand (DESIGN.md).
namespace parity::cli {

enum ExitCode : int {
  kPassed = 0,
  kNumericMismatch = 1,
  kStructuralMismatch = 2,
  kUsageOrIoError = 3,
};

}  // namespace parity::cli
