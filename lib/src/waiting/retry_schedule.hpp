// When the next attempt of a waiting lock() is due, by the retry policy (lockbridge/waiting.hpp).
#pragma once

#include <chrono>
#include <optional>

#include "lockbridge/waiting.hpp"

namespace lockbridge::detail {

class RetrySchedule {
 public:
  using Clock = std::chrono::steady_clock;

  // `deadline` is the caller's (time_point::max() for none); `started` is when waiting began.
  RetrySchedule(const RetryPolicy& policy, Clock::time_point started, Clock::time_point deadline);

  // After a failed attempt: when to try again, or nullopt when the policy allows no more attempts.
  // `holder_remaining` is how long the holder's lease still runs, when the attempt learned it.
  std::optional<Clock::time_point> next(Clock::time_point now,
                                        std::optional<std::chrono::milliseconds> holder_remaining);

 private:
  std::optional<Clock::time_point> within_deadline(Clock::time_point due, Clock::time_point now) const;

  RetryPolicy policy_;
  Clock::time_point deadline_;
  long long attempts_allowed_ = -1;  // jedis_lock: timeout / interval + 1; -1 = unbounded
  int failures_ = 0;
};

}  // namespace lockbridge::detail
