#pragma once
// parity::Error: the one exception type the library throws for bad input, bad parameters and
// failed I/O. It carries the context a user needs to find the problem (file, layer, shape) and
// renders as a single line, so the CLI can print it as is and exit with code 3.
#include <exception>
#include <string>

namespace parity {

class Error : public std::exception {
 public:
  explicit Error(std::string message);

  // Context setters return *this so a throw site reads `throw Error("...").file(path);` and a
  // caller higher up can add what it knows: `catch (Error& e) { e.layer(name); throw; }`.
  // A context already set is kept: the innermost one is the most precise.
  Error& file(std::string path);
  Error& layer(std::string name);
  Error& shape(std::string shape);

  const std::string& message() const { return message_; }
  const std::string& file_path() const { return file_; }
  const std::string& layer_name() const { return layer_; }
  const std::string& shape_text() const { return shape_; }

  // "<file>: layer <name>: <message> (shape <shape>)", parts present only when set.
  const char* what() const noexcept override { return line_.c_str(); }

 private:
  void render();

  std::string message_, file_, layer_, shape_, line_;
};

// A backend that has no kernel for a call (LibTorch's CPU lacks float16 convolution; parity's CUDA
// kernels are float32 only): the case is UNSUPPORTED on it, not a failure of what it has.
class Unsupported : public Error {
 public:
  explicit Unsupported(std::string message);
  ~Unsupported() override;  // defined in error.cpp: one type across the plugin boundary
};

// errno as text, for I/O errors ("No space left on device").
std::string errno_text(int err);

}  // namespace parity
