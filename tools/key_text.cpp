#include "key_text.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

namespace lockbridge::tools {

namespace {
constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The length of the valid UTF-8 sequence starting at bytes[i], or 0 (RFC 3629: no overlongs, no
// surrogates, nothing above U+10FFFF).
std::size_t utf8_sequence(std::string_view bytes, std::size_t i) noexcept {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(bytes[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (i + length > bytes.size()) return 0;
  if (byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (std::size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return length;
}
}  // namespace

bool is_valid_utf8(std::string_view bytes) noexcept {
  for (std::size_t i = 0; i < bytes.size();) {
    const std::size_t length = utf8_sequence(bytes, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    std::uint32_t chunk = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) chunk |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) chunk |= static_cast<unsigned char>(bytes[i + 2]);
    out.push_back(kAlphabet[(chunk >> 18) & 63]);
    out.push_back(kAlphabet[(chunk >> 12) & 63]);
    out.push_back(i + 1 < bytes.size() ? kAlphabet[(chunk >> 6) & 63] : '=');
    out.push_back(i + 2 < bytes.size() ? kAlphabet[chunk & 63] : '=');
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    std::uint32_t chunk = 0;
    int padding = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const char c = text[i + k];
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        ++padding;
        chunk <<= 6;
        continue;
      }
      const auto digit = kAlphabet.find(c);
      if (digit == std::string_view::npos || padding > 0) return std::nullopt;
      chunk = (chunk << 6) | static_cast<std::uint32_t>(digit);
    }
    out.push_back(static_cast<char>((chunk >> 16) & 0xFF));
    if (padding < 2) out.push_back(static_cast<char>((chunk >> 8) & 0xFF));
    if (padding < 1) out.push_back(static_cast<char>(chunk & 0xFF));
  }
  if (base64_encode(out) != text) return std::nullopt;  // non-canonical (stray bits in the padding)
  return out;
}

void put_key(nlohmann::ordered_json& out, std::string_view key, const std::string& field) {
  if (is_valid_utf8(key)) {
    out[field] = std::string(key);
    return;
  }
  std::string shown;
  constexpr std::string_view kHex = "0123456789abcdef";
  for (std::size_t i = 0; i < key.size();) {
    if (const std::size_t length = utf8_sequence(key, i); length > 0) {
      shown.append(key.substr(i, length));
      i += length;
    } else {
      const auto byte = static_cast<unsigned char>(key[i++]);
      shown.append("\\x").push_back(kHex[byte >> 4]);
      shown.push_back(kHex[byte & 15]);
    }
  }
  out[field] = shown;
  out[field + "_base64"] = base64_encode(key);
}

std::optional<std::string> read_key(const nlohmann::json& in, const std::string& field) {
  if (const auto it = in.find(field + "_base64"); it != in.end() && it->is_string()) {
    return base64_decode(it->get<std::string>());
  }
  if (const auto it = in.find(field); it != in.end() && it->is_string()) return it->get<std::string>();
  return std::nullopt;
}

std::string quoted_key(std::string_view key) {
  nlohmann::ordered_json shown;
  put_key(shown, key);
  return terminal_json(shown["key"]);
}

std::string terminal_json(const nlohmann::ordered_json& value) {
  return terminal_safe_json(value.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

namespace {

constexpr std::string_view kHex = "0123456789abcdef";

// The code point of the valid UTF-8 sequence of `length` bytes at `at`.
char32_t code_point(std::string_view at, std::size_t length) noexcept {
  const auto byte = [&](std::size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(at[k])); };
  switch (length) {
    case 1:
      return byte(0);
    case 2:
      return ((byte(0) & 0x1F) << 6) | (byte(1) & 0x3F);
    case 3:
      return ((byte(0) & 0x0F) << 12) | ((byte(1) & 0x3F) << 6) | (byte(2) & 0x3F);
    default:
      return ((byte(0) & 0x07) << 18) | ((byte(1) & 0x3F) << 12) | ((byte(2) & 0x3F) << 6) | (byte(3) & 0x3F);
  }
}

// What a terminal may obey instead of showing: the C0 controls (ESC starts its sequences), DEL,
// the C1 controls (CSI is U+009B), and the bidirectional formatting characters, which reorder
// what follows them on the line (the "Trojan Source" characters: U+202A-U+202E, U+2066-U+2069,
// and the marks U+200E, U+200F, U+061C).
bool obeyed_by_terminals(char32_t code) noexcept {
  return code < 0x20 || (code >= 0x7F && code <= 0x9F) || code == 0x061C || code == 0x200E || code == 0x200F ||
         (code >= 0x202A && code <= 0x202E) || (code >= 0x2066 && code <= 0x2069);
}

void append_u_escape(std::string& out, char32_t code) {
  out.append("\\u");
  for (int shift = 12; shift >= 0; shift -= 4) out.push_back(kHex[(code >> shift) & 15]);
}

}  // namespace

std::string terminal_safe_json(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  for (std::size_t i = 0; i < json.size();) {
    const std::size_t length = std::max<std::size_t>(utf8_sequence(json, i), 1);
    const char32_t code = code_point(json.substr(i), length);
    // Inside a JSON string any character may be written as \uXXXX; the dump already escaped the
    // C0 controls, and outside strings there is only ASCII punctuation.
    if (code >= 0x7F && obeyed_by_terminals(code)) {
      append_u_escape(out, code);
    } else {
      out.append(json.substr(i, length));
    }
    i += length;
  }
  return out;
}

std::string terminal_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_sequence(text, i);
    if (length == 0) {  // not UTF-8: the byte, in hex
      const auto byte = static_cast<unsigned char>(text[i++]);
      out.append("\\x").push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 15]);
      continue;
    }
    const char32_t code = code_point(text.substr(i), length);
    if (code == '\t') {
      out.push_back(' ');
    } else if (obeyed_by_terminals(code)) {
      if (code <= 0xFF) {
        out.append("\\x").push_back(kHex[code >> 4]);
        out.push_back(kHex[code & 15]);
      } else {
        append_u_escape(out, code);
      }
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  return out;
}

}  // namespace lockbridge::tools
