// lockbridge: the identities locks write, and the one reading of the wall clock.
//
// Random tokens and UUIDs come from the kernel's CSPRNG (getrandom(2)); the token strategy, the
// CLI's convert and the compat layer all use these, so every lockbridge value has one format.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "lockbridge/export.hpp"

namespace lockbridge {

// 128 random bits as 32 lowercase hex characters: the token strategy's lock value. Throws
// Error{io} if the kernel cannot give randomness.
LOCKBRIDGE_API std::string random_token();

// A random (version 4) UUID, lowercase 8-4-4-4-12, as java.util.UUID.toString() prints it.
// Throws like random_token().
LOCKBRIDGE_API std::string random_uuid();

// This process's identity: a random_uuid() drawn on first use and kept for the process's life.
// A child made by fork() draws its own on its first use: it is another process, and sharing its
// parent's identity would make the two one lock owner (Redisson's fields, RedisLocker's values).
// Thread-safe. Throws like random_token().
LOCKBRIDGE_API std::string process_uuid();

// Whether `text` is a UUID in its 8-4-4-4-12 form (hex digits of either case), as Java and the
// jedis-lock master values write it.
LOCKBRIDGE_API bool is_uuid(std::string_view text) noexcept;

// ASCII letters lowered; other bytes unchanged.
LOCKBRIDGE_API std::string to_lower(std::string_view text);

// This host's wall clock in epoch milliseconds, plus `offset`: the one place lockbridge reads it.
// Only the legacy strategy's faithful peers (and what must judge as they do) stamp and judge
// locks by it; everything else uses the steady clock or Redis TIME.
LOCKBRIDGE_API std::int64_t wall_clock_ms(std::chrono::milliseconds offset = std::chrono::milliseconds::zero());

}  // namespace lockbridge
