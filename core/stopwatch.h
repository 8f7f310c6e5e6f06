#pragma once
// Wall time since construction, on the steady clock: what every timed figure parity prints
// (layer times, compare's passes, the dump writer) is measured with.
#include <chrono>

namespace parity {

class Stopwatch {
 public:
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }
  double ms() const { return seconds() * 1e3; }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace parity
