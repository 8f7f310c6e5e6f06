#include "core/error.h"

#include <cstring>
#include <utility>

#include "core/printable.h"

namespace parity {

namespace {
// Messages are printed as one line; a newline inside one (from strerror, a path, a header
// excerpt) would break log parsers and the "one-line error" promise. Other control characters
// and bytes that are not UTF-8 (a file name from a manifest) are escaped (core/printable.h): a
// NUL would cut what() short, an ESC sequence would rewrite the user's terminal.
std::string one_line(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return printable(s);
}
}  // namespace

Error::Error(std::string message) : message_(one_line(std::move(message))) { render(); }

Error& Error::file(std::string path) {
  if (file_.empty()) file_ = one_line(std::move(path));
  render();
  return *this;
}

Error& Error::layer(std::string name) {
  if (layer_.empty()) layer_ = one_line(std::move(name));
  render();
  return *this;
}

Error& Error::shape(std::string shape) {
  if (shape_.empty()) shape_ = one_line(std::move(shape));
  render();
  return *this;
}

void Error::render() {
  line_.clear();
  if (!file_.empty()) line_ += file_ + ": ";
  if (!layer_.empty()) line_ += "layer " + layer_ + ": ";
  line_ += message_;
  if (!shape_.empty()) line_ += " (shape " + shape_ + ")";
}

Unsupported::Unsupported(std::string message) : Error(std::move(message)) {}
Unsupported::~Unsupported() = default;

std::string errno_text(int err) { return std::strerror(err); }

}  // namespace parity
