#include "core/printable.h"

#include <cstdint>
#include <cstdio>

namespace parity {

namespace {

// The length of the valid UTF-8 sequence starting at s[i] (1 to 4), or 0 when none does: a
// stray continuation byte, an overlong form, a surrogate, past U+10FFFF or cut short.
size_t utf8_length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return uint8_t(s[k]); };
  const uint8_t c = byte(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  uint32_t cp = 0, min = 0;
  if ((c & 0xE0) == 0xC0) n = 2, cp = c & 0x1Fu, min = 0x80;
  else if ((c & 0xF0) == 0xE0) n = 3, cp = c & 0x0Fu, min = 0x800;
  else if ((c & 0xF8) == 0xF0) n = 4, cp = c & 0x07u, min = 0x10000;
  else return 0;
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3Fu);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

std::string hex_escape(const char* form, unsigned v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, form, v);
  return buf;
}

}  // namespace

std::string printable(std::string_view text, bool names) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const uint8_t c = uint8_t(text[i]);
    if (c < 0x20 || c == 0x7F) {
      out += hex_escape("\\x%02x", c), ++i;
    } else if (c == '\\' && names) {
      out += "\\\\", ++i;
    } else if (c < 0x80) {
      out += char(c), ++i;
    } else if (const size_t n = utf8_length(text, i); n == 0) {
      out += hex_escape("\\x%02x", c), ++i;
    } else if (n == 2 && c == 0xC2 && uint8_t(text[i + 1]) < 0xA0) {  // U+0080 to U+009F: C1 controls
      out += hex_escape("\\u%04x", uint8_t(text[i + 1])), i += 2;
    } else {
      out.append(text.substr(i, n)), i += n;
    }
  }
  return out;
}

}  // namespace parity
