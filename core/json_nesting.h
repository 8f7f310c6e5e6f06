#pragma once
// JSON that parity reads from a file (a manifest, a tolerance file, a report) is parsed into a
// tree that is later walked recursively (printed back, destroyed, compared): 100,000 nested
// arrays overflow the stack there. The text's depth is checked before it is parsed.
#include <cstddef>
#include <string_view>

namespace parity {

// Deep enough for every file parity writes (a manifest is 6 levels deep) and for any "run"
// field a user adds.
constexpr size_t kMaxJsonDepth = 64;

// Throws parity::Error ("nested deeper than 64 levels") when arrays and objects in `text`, outside
// its strings, nest deeper than `max_depth`. Syntax is the parser's business, not this scan's.
void check_json_depth(std::string_view text, size_t max_depth = kMaxJsonDepth);

// A JSON file's text, to parse: a regular file of at most `max_bytes` (core/regular_file.h) whose
// nesting check_json_depth passed; errors name the file.
std::string read_json_file(const std::string& path, size_t max_bytes);

}  // namespace parity
