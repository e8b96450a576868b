#include "nestsim/io/errors.h"

#include <cstdint>
#include <cstdio>

namespace nestsim::io {
namespace {

// The length of the UTF-8 sequence that starts `text` at `i` and its code point, or 0
// when the bytes there are not one.
std::size_t utf8_at(const std::string& text, std::size_t i, uint32_t& code) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b = byte(i);
  std::size_t n = b >= 0xF0 && b <= 0xF4 ? 4 : b >= 0xE0 ? 3 : b >= 0xC2 && b < 0xE0 ? 2 : 0;
  if (n == 0 || b >= 0xF5 || i + n > text.size()) return 0;
  code = b & (0x7F >> n);
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < least[n] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return n;
}

// Characters that print as nothing or as a blank: shown by name.
bool invisible(uint32_t code) {
  return code == 0xA0 || code == 0xAD || (code >= 0x2000 && code <= 0x200F) ||
         (code >= 0x2028 && code <= 0x202F) || (code >= 0x2060 && code <= 0x206F) ||
         code == 0xFEFF || code == 0x3000 || (code >= 0x80 && code < 0xA0);
}

}  // namespace

std::string excerpt(const std::string& text, std::size_t limit) {
  std::string out;
  std::size_t shown = 0, i = 0;
  char buf[16];
  while (i < text.size() && shown < limit) {
    const unsigned char b = static_cast<unsigned char>(text[i]);
    uint32_t code = 0;
    std::size_t n = 1;
    if (b >= 0x20 && b < 0x7F) {
      out.push_back(char(b));
    } else if (b == '\t') {
      out += "\\t";
    } else if (b >= 0x80 && (n = utf8_at(text, i, code)) != 0) {
      if (invisible(code)) {
        std::snprintf(buf, sizeof buf, "<U+%04X>", unsigned(code));
        out += buf;
      } else {
        out.append(text, i, n);
      }
    } else {
      n = 1;
      std::snprintf(buf, sizeof buf, "\\x%02X", unsigned(b));
      out += buf;
    }
    i += n;
    ++shown;
  }
  if (i < text.size()) out += "... (" + std::to_string(text.size()) + " bytes in all)";
  return out;
}

}  // namespace nestsim::io
