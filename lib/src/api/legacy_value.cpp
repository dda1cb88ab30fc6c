#include "lockbridge/legacy_value.hpp"

#include "lockbridge/identity.hpp"

#include <charconv>
#include <limits>

namespace lockbridge {
namespace {

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

// Java's Long.parseLong: an optional sign, then ASCII digits only, within int64.
std::optional<std::int64_t> parse_java_long(std::string_view text) {
  bool negative = false;
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  if (text.empty()) return std::nullopt;
  std::uint64_t magnitude = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, magnitude);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  if (negative) {
    if (magnitude > static_cast<std::uint64_t>(kInt64Max) + 1) return std::nullopt;
    return magnitude == static_cast<std::uint64_t>(kInt64Max) + 1 ? std::numeric_limits<std::int64_t>::min()
                                                                  : -static_cast<std::int64_t>(magnitude);
  }
  if (magnitude > static_cast<std::uint64_t>(kInt64Max)) return std::nullopt;
  return static_cast<std::int64_t>(magnitude);
}

bool all_digits(std::string_view text) {
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Python's float() as old redis-py used it on its own values: [sign] digits [. digits].
std::optional<LegacyStamp> parse_seconds(std::string_view text) {
  bool negative = false;
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  const auto dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view fraction = dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
  if ((whole.empty() && fraction.empty()) || !all_digits(whole) || !all_digits(fraction)) return std::nullopt;
  std::uint64_t seconds = 0;
  if (!whole.empty()) {
    const auto [ptr, ec] = std::from_chars(whole.data(), whole.data() + whole.size(), seconds);
    if (ec != std::errc() || ptr != whole.data() + whole.size()) return std::nullopt;
  }
  constexpr std::uint64_t kLimit = static_cast<std::uint64_t>(kInt64Max / 1000) - 1;
  if (seconds > kLimit) return std::nullopt;
  std::int64_t millis = 0;
  for (std::size_t i = 0; i < 3; ++i) millis = millis * 10 + (i < fraction.size() ? fraction[i] - '0' : 0);
  const std::int64_t magnitude = static_cast<std::int64_t>(seconds) * 1000 + millis;
  LegacyStamp stamp;
  stamp.expiry_ms = negative ? -magnitude : magnitude;
  stamp.forever = !negative && seconds == static_cast<std::uint64_t>(kLegacyForeverSeconds) &&
                  fraction.find_first_not_of('0') == std::string_view::npos;
  return stamp;
}

constexpr std::int64_t kPlausibleMinMs = 100'000'000'000;      // 1973-03-03: below, seconds read as ms
constexpr std::int64_t kPlausibleMaxMs = 100'000'000'000'000;  // year 5138: above, ms read as seconds

}  // namespace

std::optional<LegacyStamp> parse_legacy_value(std::string_view value, LegacyFormat format) {
  switch (format) {
    case LegacyFormat::epoch_ms: {
      const auto ms = parse_java_long(value);
      if (!ms) return std::nullopt;
      return LegacyStamp{*ms, false, {}};
    }
    case LegacyFormat::epoch_seconds:
      return parse_seconds(value);
    case LegacyFormat::uuid_ms: {
      const auto colon = value.find(':');
      if (colon == std::string_view::npos || !is_uuid(value.substr(0, colon))) return std::nullopt;
      const auto ms = parse_java_long(value.substr(colon + 1));
      if (!ms) return std::nullopt;
      return LegacyStamp{*ms, false, to_lower(value.substr(0, colon))};
    }
  }
  return std::nullopt;
}

bool is_plausible(const LegacyStamp& stamp, LegacyFormat format) {
  if (stamp.forever) return format == LegacyFormat::epoch_seconds;
  return stamp.expiry_ms >= kPlausibleMinMs && stamp.expiry_ms < kPlausibleMaxMs;
}

std::string format_legacy_value(LegacyFormat format, std::int64_t expiry_ms, std::string_view owner) {
  switch (format) {
    case LegacyFormat::epoch_ms:
      return std::to_string(expiry_ms);
    case LegacyFormat::epoch_seconds: {
      // Round up: a lease must never look shorter to a peer than it is.
      const std::int64_t seconds = expiry_ms / 1000 + (expiry_ms % 1000 > 0 ? 1 : 0);
      return std::to_string(seconds);
    }
    case LegacyFormat::uuid_ms:
      return std::string(owner) + ":" + std::to_string(expiry_ms);
  }
  return {};
}

bool jedis_lock_master_may_take(std::optional<std::string_view> value, std::string_view my_uuid, std::int64_t now_ms) {
  if (!value) return true;
  // Java's split(":") keeps only the first two parts for master: "<uuid>:<ms>:junk" still reads.
  const auto first = value->find(':');
  const auto second = first == std::string_view::npos ? first : value->find(':', first + 1);
  const auto stamp = parse_legacy_value(value->substr(0, second), LegacyFormat::uuid_ms);
  return !stamp || is_expired(*stamp, now_ms) || stamp->owner == my_uuid;
}

}  // namespace lockbridge
