// What every test of text meant for a terminal checks (and fuzz_classify too): that it holds
// nothing a terminal would obey instead of showing. tools/key_text.hpp says what is escaped.
#pragma once

#include <string_view>

namespace lockbridge::testing {

// No C0 control (but newline and tab, where `newlines` allows them: the layout of a text), no DEL, no C1 control (U+0080-U+009F,
// CSI among them), and no bidirectional formatting character (U+061C, U+200E, U+200F,
// U+202A-U+202E, U+2066-U+2069), which reorders the rest of a line.
inline bool terminal_safe(std::string_view text, bool newlines = true) {
  const auto at = [&text](std::size_t i) -> unsigned char { return i < text.size() ? static_cast<unsigned char>(text[i]) : 0; };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const unsigned char byte = at(i);
    if ((byte < 0x20 && !(newlines && (byte == '\n' || byte == '\t'))) || byte == 0x7F) return false;
    if (byte == 0xC2 && at(i + 1) >= 0x80 && at(i + 1) <= 0x9F) return false;
    if (byte == 0xD8 && at(i + 1) == 0x9C) return false;
    if (byte == 0xE2 && at(i + 1) == 0x80 && (at(i + 2) == 0x8E || at(i + 2) == 0x8F)) return false;
    if (byte == 0xE2 && at(i + 1) == 0x80 && at(i + 2) >= 0xAA && at(i + 2) <= 0xAE) return false;
    if (byte == 0xE2 && at(i + 1) == 0x81 && at(i + 2) >= 0xA6 && at(i + 2) <= 0xA9) return false;
  }
  return true;
}

}  // namespace lockbridge::testing
