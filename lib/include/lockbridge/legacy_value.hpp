// lockbridge: the value encodings of SETNX + GETSET expiry-timestamp locks.
//
// A legacy lock key holds the moment its lease ends, written by the holder's client:
//   epoch_ms       "1400000060001"                                    jedis-lock 1.0.0 (the default)
//   epoch_seconds  "1400000061" (old redis-py wrote "1400000061.0")   redis-py <= 2.9, Redis SETNX doc
//   uuid_ms        "f47ac10b-58cc-4372-a567-0e02b2c3d479:1436950000001"  jedis-lock master (2015)
// In epoch_seconds, 2147483649 (2^31 + 1) means "held forever" (old redis-py without a timeout).
// Pure functions: no I/O, no clock.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "lockbridge/export.hpp"
#include "lockbridge/name_table.hpp"

namespace lockbridge {

enum class LegacyFormat { epoch_ms, epoch_seconds, uuid_ms };

// What a legacy lock value says.
struct LOCKBRIDGE_API LegacyStamp {
  std::int64_t expiry_ms = 0;  // epoch milliseconds at which the lease ends (seconds x 1000)
  bool forever = false;        // the 2^31+1 sentinel: never expires
  std::string owner;           // uuid_ms only: the owner UUID, lowercase
  bool operator==(const LegacyStamp&) const = default;
};

inline constexpr std::int64_t kLegacyForeverSeconds = 2147483649;  // 2^31 + 1

// Reads `value` the way a peer using `format` reads it: decimal integers with an optional sign
// (Java's Long.parseLong), seconds may carry a fraction (Python's float()), uuid_ms is a canonical
// 8-4-4-4-12 UUID, ':' and the integer. Returns nullopt for anything else, including overflow.
LOCKBRIDGE_API std::optional<LegacyStamp> parse_legacy_value(std::string_view value, LegacyFormat format);

// Whether a parsed stamp is a believable expiry for its format: rejects unit mix-ups (a seconds
// value read as milliseconds looks long expired and would be stolen; a milliseconds value read
// as seconds looks thousands of years ahead) and negative values. The hardened preset only acts
// on plausible stamps.
LOCKBRIDGE_API bool is_plausible(const LegacyStamp& stamp, LegacyFormat format);

// Writes the value for a lease ending at `expiry_ms`. Seconds are rounded up, so the written
// expiry is never earlier than the lease. `owner` is used by uuid_ms only.
LOCKBRIDGE_API std::string format_legacy_value(LegacyFormat format, std::int64_t expiry_ms, std::string_view owner = {});

// Expired when the stored expiry is strictly before `now_ms` (jedis-lock's `expiry < now`).
inline bool is_expired(const LegacyStamp& stamp, std::int64_t now_ms) {
  return !stamp.forever && stamp.expiry_ms < now_ms;
}

// jedis-lock master's takeover test (its Lock.fromString, then isExpiredOrMine): may the holder
// with UUID `my_uuid` take `value` (nullopt: the key is gone) over at `now_ms`? Master reads a
// missing or unreadable value as NO_LOCK, expired since 1970, so the answer is yes for anything
// that is not "<uuid>:<long>[:...]" (it splits on ':' and reads the first two parts): a bare
// jedis-lock 1.0.0 stamp, a token, garbage. That is the hazard docs/compat.md describes, kept only where a
// peer must be copied exactly (LegacyOptions::jedis_lock_master).
LOCKBRIDGE_API bool jedis_lock_master_may_take(std::optional<std::string_view> value, std::string_view my_uuid, std::int64_t now_ms);

// "ms", "seconds", "uuid-ms": the names used by the CLI and JSON output.
inline constexpr NameTable<LegacyFormat, 3> kLegacyFormatNames{std::array<std::pair<LegacyFormat, std::string_view>, 3>{
    {{LegacyFormat::epoch_ms, "ms"}, {LegacyFormat::epoch_seconds, "seconds"}, {LegacyFormat::uuid_ms, "uuid-ms"}}}};
constexpr std::string_view to_string(LegacyFormat format) noexcept { return kLegacyFormatNames.name(format, "?"); }
constexpr std::optional<LegacyFormat> legacy_format_from_string(std::string_view name) noexcept {
  return kLegacyFormatNames.parse(name);
}

}  // namespace lockbridge
