#include "harness/core/terminal_text.h"

#include <cstdint>

namespace collfuzz {
namespace {

void escape_byte(std::string& out, unsigned char b) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[b >> 4];
  out += kHex[b & 0xf];
}

// The length of the valid UTF-8 sequence at text[i] and its code point, or 0 when it is not one.
std::size_t utf8_sequence(std::string_view text, std::size_t i, std::uint32_t& cp) {
  const auto b0 = static_cast<unsigned char>(text[i]);
  std::size_t n = 0;
  std::uint32_t min = 0;
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    n = 2;
    cp = b0 & 0x1fu;
    min = 0x80;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    n = 3;
    cp = b0 & 0x0fu;
    min = 0x800;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    n = 4;
    cp = b0 & 0x07u;
    min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(text[i + k]);
    if ((b & 0xc0u) != 0x80u) return 0;
    cp = (cp << 6) | (b & 0x3fu);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

bool unsafe_code_point(std::uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) ||      // C1 controls
         (cp >= 0x202a && cp <= 0x202e) ||  // bidirectional embeddings and overrides
         (cp >= 0x2066 && cp <= 0x2069);    // bidirectional isolates
}

std::string escape(std::string_view text, bool keep_lines) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b < 0x80) {
      if ((b < 0x20 && !(keep_lines && (b == '\n' || b == '\t'))) || b == 0x7f) {
        escape_byte(out, b);
      } else {
        out += static_cast<char>(b);
      }
      ++i;
      continue;
    }
    std::uint32_t cp = 0;
    const std::size_t n = utf8_sequence(text, i, cp);
    if (n == 0) {
      escape_byte(out, b);
      ++i;
      continue;
    }
    if (unsafe_code_point(cp)) {
      for (std::size_t k = 0; k < n; ++k) escape_byte(out, static_cast<unsigned char>(text[i + k]));
    } else {
      out.append(text.substr(i, n));
    }
    i += n;
  }
  return out;
}

}  // namespace

std::string terminal_text(std::string_view text) { return escape(text, false); }
std::string terminal_lines(std::string_view text) { return escape(text, true); }

}  // namespace collfuzz
