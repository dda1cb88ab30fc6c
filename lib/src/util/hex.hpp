// Bytes as lowercase hex, two characters per byte: random tokens and script SHA1s.
#pragma once

#include <span>
#include <string>

namespace lockbridge::detail {

inline std::string lowercase_hex(std::span<const unsigned char> bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const unsigned char b : bytes) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 0xf]);
  }
  return out;
}

}  // namespace lockbridge::detail
