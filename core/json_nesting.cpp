#include "core/json_nesting.h"

#include <string>

#include "core/error.h"
#include "core/regular_file.h"

namespace parity {

void check_json_depth(std::string_view text, size_t max_depth) {
  size_t depth = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) throw Error("JSON nested deeper than " + std::to_string(max_depth) + " levels");
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

std::string read_json_file(const std::string& path, size_t max_bytes) {
  std::string text = read_regular_file(path, max_bytes);
  try {
    check_json_depth(text);
  } catch (Error& e) {
    throw e.file(path);
  }
  return text;
}

}  // namespace parity
