#include "cluster/key_slot.hpp"

#include <array>

namespace lockbridge::detail {
namespace {

// Built at compile time from the polynomial rather than pasted in, so there is no 256-entry
// literal to mistype; the static_asserts below pin it to Redis's own table (src/crc16.c).
constexpr std::array<std::uint16_t, 256> make_crc16_table() {
  std::array<std::uint16_t, 256> table{};
  for (unsigned byte = 0; byte < 256; ++byte) {
    unsigned crc = byte << 8;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 0x8000U) != 0 ? (crc << 1) ^ 0x1021U : crc << 1;
    table[byte] = static_cast<std::uint16_t>(crc & 0xFFFFU);
  }
  return table;
}

constexpr auto kCrc16Table = make_crc16_table();
static_assert(kCrc16Table[1] == 0x1021 && kCrc16Table[2] == 0x2042 && kCrc16Table[255] == 0x1EF0);

}  // namespace

std::uint16_t crc16(std::string_view bytes) noexcept {
  unsigned crc = 0;
  for (const char c : bytes) {
    // char may be signed: work with the byte's value 0..255, as Redis does with its unsigned buffer.
    const auto byte = static_cast<unsigned char>(c);
    crc = ((crc << 8) ^ kCrc16Table[((crc >> 8) ^ byte) & 0xFFU]) & 0xFFFFU;
  }
  return static_cast<std::uint16_t>(crc);
}

std::string_view hashed_part(std::string_view key) noexcept {
  // The spec's rule exactly: only the FIRST '{' counts, and an empty tag ("{}") means no tag, so
  // the whole key is hashed; it does not go on looking for a later, non-empty tag.
  const auto open = key.find('{');
  if (open == std::string_view::npos) return key;
  const auto close = key.find('}', open + 1);
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

std::uint16_t key_slot(std::string_view key) noexcept {
  // 16384 is a power of two: the mask is the spec's "mod 16384".
  return static_cast<std::uint16_t>(crc16(hashed_part(key)) & (kSlotCount - 1));
}

}  // namespace lockbridge::detail
