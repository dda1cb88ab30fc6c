// Which of Redis Cluster's 16384 hash slots a key belongs to (the Redis Cluster specification,
// "Keys distribution model"). Pure computation: no connection, no allocation, binary-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace lockbridge::detail {

inline constexpr std::size_t kSlotCount = 16384;

// CRC16-CCITT in its XMODEM variant (polynomial 0x1021, initial value 0, no reflection, no final
// xor), the one Redis uses. crc16("123456789") == 0x31C3.
std::uint16_t crc16(std::string_view bytes) noexcept;

// The part of `key` that is hashed: the bytes between the first '{' and the first '}' after it,
// when there are any; otherwise the whole key. "{user1000}.following" -> "user1000",
// "foo{}{bar}" -> "foo{}{bar}", "foo{{bar}}zap" -> "{bar".
std::string_view hashed_part(std::string_view key) noexcept;

// crc16(hashed_part(key)) mod 16384; always < kSlotCount.
std::uint16_t key_slot(std::string_view key) noexcept;

}  // namespace lockbridge::detail
