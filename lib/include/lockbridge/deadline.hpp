// lockbridge: the steady-clock deadline of a try_lock_for() or try_lock_until().
//
// A caller's wait may be any std::chrono duration or time point, of any representation and
// period: zero, negative, NaN, or the type's max() (days::max(), sys_days::max(), picoseconds).
// "now + wait" must not overflow (a wrapped deadline once made a huge wait return at once, and a
// negative one block for good), so it is computed here, once, for every lock type: compared as long
// double seconds first, and converted to the steady clock's integer nanoseconds only when it fits.
#pragma once

#include <chrono>

namespace lockbridge {

// Waits of this length or more mean "no deadline".
inline constexpr std::chrono::hours kNoDeadline{24 * 365 * 100};

// now + wait on the steady clock. A wait that is not positive (zero, negative, NaN) gives now: one
// attempt. A wait of kNoDeadline or more (infinity included) gives time_point::max(). Never
// overflows.
template <class Rep, class Period>
std::chrono::steady_clock::time_point deadline_after(const std::chrono::duration<Rep, Period>& wait) {
  const auto now = std::chrono::steady_clock::now();
  const std::chrono::duration<long double> seconds = wait;  // no integer conversion can overflow here
  if (!(seconds > seconds.zero())) return now;
  if (seconds >= kNoDeadline) return std::chrono::steady_clock::time_point::max();
  // Under 100 years: fits in the steady clock's nanoseconds, and in `now +` them.
  return now + std::chrono::ceil<std::chrono::steady_clock::duration>(seconds);
}

// The same for a time point of any clock, the wait measured on that clock now. A time point
// already past (min() included) gives one attempt; one 100 years or more ahead (max()), no deadline.
template <class Clock, class Duration>
std::chrono::steady_clock::time_point deadline_at(const std::chrono::time_point<Clock, Duration>& deadline) {
  using Seconds = std::chrono::duration<long double>;
  // Each side on its own to long double: subtracting first, in their common integer type, could overflow.
  const Seconds left = Seconds(deadline.time_since_epoch()) - Seconds(Clock::now().time_since_epoch());
  return deadline_after(left);
}

}  // namespace lockbridge
