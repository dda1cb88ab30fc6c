// Time sums that cannot overflow. A moment plus a duration from the command line or from Redis
// (an expiry, a bench deadline in nanoseconds) stops at the end of its type instead of wrapping
// around into the past: a wrapped deadline has already passed, so a wait of "for ever" would end
// at once. Steady-clock deadlines use the library's lockbridge::deadline_after (deadline.hpp).
#pragma once

#include <cstdint>
#include <limits>

namespace lockbridge::tools {

// a + b, or the limit of std::int64_t that the sum would cross.
constexpr std::int64_t add_saturating(std::int64_t a, std::int64_t b) noexcept {
  std::int64_t sum = 0;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
}

}  // namespace lockbridge::tools
