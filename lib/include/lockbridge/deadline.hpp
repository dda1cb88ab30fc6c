// lockbridge: the steady-clock deadline of a try_lock_for() or try_lock_until().
//
// A caller's wait may be any std::chrono duration or time point: zero, negative, NaN, or the
// type's max(). The sum "now + wait" must not overflow (a wrapped deadline once made a huge wait
// return at once), so it is computed here, once, for every lock type.
#pragma once

#include <chrono>

namespace lockbridge {

// Waits of this length or more mean "no deadline".
inline constexpr std::chrono::hours kNoDeadline{24 * 365 * 100};

// now + wait on the steady clock. A wait that is not positive (zero, negative, NaN) gives now: one
// attempt. A wait of kNoDeadline or more gives time_point::max(). Never overflows.
template <class Rep, class Period>
std::chrono::steady_clock::time_point deadline_after(const std::chrono::duration<Rep, Period>& wait) {
  const auto now = std::chrono::steady_clock::now();
  if (!(wait > std::chrono::duration<Rep, Period>::zero())) return now;
  if (wait >= kNoDeadline) return std::chrono::steady_clock::time_point::max();
  return now + std::chrono::ceil<std::chrono::steady_clock::duration>(wait);
}

// The same for a time point of any clock: the wait is measured on that clock now. A time point
// already past (time_point::min() included) gives one attempt; subtracting first could overflow.
template <class Clock, class Duration>
std::chrono::steady_clock::time_point deadline_at(const std::chrono::time_point<Clock, Duration>& deadline) {
  const auto now = Clock::now();
  if (!(deadline > now)) return std::chrono::steady_clock::now();
  // Both ends are finite and deadline > now; a difference too large for the type means "no deadline".
  if (deadline - kNoDeadline >= now) return std::chrono::steady_clock::time_point::max();
  return deadline_after(deadline - now);
}

}  // namespace lockbridge
