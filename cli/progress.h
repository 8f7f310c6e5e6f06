#pragma once
// A one-line progress display for long commands: on stderr, only when stderr is a terminal (so
// logs and pipes stay clean), erased when cleared or destroyed.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdint>
#include <iostream>
#include <string>

namespace parity::cli {

class Progress {
 public:
  Progress() : tty_(::isatty(2)) {}
  ~Progress() { clear(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // "[i/n] what", i counted from 1.
  void show(int64_t i, int64_t n, const std::string& what) {
    if (!tty_) return;
    std::cerr << fmt::format("\r[{}/{}] {:<50}", i, n, what.substr(0, 50)) << std::flush;
    shown_ = true;
  }
  void clear() {
    if (shown_) std::cerr << "\r" << std::string(72, ' ') << "\r" << std::flush;
    shown_ = false;
  }

 private:
  bool tty_, shown_ = false;
};

}  // namespace parity::cli
