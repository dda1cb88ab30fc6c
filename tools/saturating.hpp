// Time sums that cannot overflow. A moment plus a duration from the command line or from Redis
// (a deadline, an expiry) stops at the end of its type instead of wrapping around into the past:
// a wrapped deadline has already passed, so a wait of "for ever" would end at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>

namespace lockbridge::tools {

// a + b, or the limit of std::int64_t that the sum would cross.
constexpr std::int64_t add_saturating(std::int64_t a, std::int64_t b) noexcept {
  std::int64_t sum = 0;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
}

// `duration` from now on the steady clock, or the clock's end when that lies beyond it.
inline std::chrono::steady_clock::time_point deadline_after(std::chrono::milliseconds duration) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point now = Clock::now();
  if (duration <= std::chrono::milliseconds::zero()) return now;
  const auto room = Clock::time_point::max() - now;
  if (duration >= std::chrono::duration_cast<std::chrono::milliseconds>(room)) return Clock::time_point::max();
  return now + duration;
}

}  // namespace lockbridge::tools
