#include "waiting/retry_schedule.hpp"

#include <unistd.h>

#include <algorithm>
#include <random>

namespace lockbridge::detail {
namespace {

// Jitter needs no secrecy, only independence between threads and processes: a forked child
// reseeds (it inherited its parent's state, and would sleep exactly as its siblings do).
std::chrono::nanoseconds uniform_up_to(std::chrono::nanoseconds bound) {
  if (bound <= std::chrono::nanoseconds::zero()) return std::chrono::nanoseconds::zero();
  thread_local std::minstd_rand generator;
  thread_local pid_t seeded_by = 0;
  if (const pid_t me = getpid(); seeded_by != me) {
    generator.seed(std::random_device{}());
    seeded_by = me;
  }
  std::uniform_int_distribution<long long> pick(0, bound.count());
  return std::chrono::nanoseconds(pick(generator));
}

}  // namespace

RetrySchedule::RetrySchedule(const RetryPolicy& policy, Clock::time_point started, Clock::time_point deadline)
    : policy_(policy), deadline_(deadline) {
  if (policy_.kind == RetryPolicy::Kind::jedis_lock && deadline != Clock::time_point::max()) {
    // Rounded up: the deadline was set a few microseconds before `started`, and truncating would
    // lose the last attempt whenever the timeout is a multiple of the interval (jedis-lock's
    // default 10000 / 100: 101 attempts, not 100).
    const auto budget = std::chrono::ceil<std::chrono::milliseconds>(deadline - started);
    // jedis-lock: `while (timeout >= 0) { try; timeout -= resolution; sleep(resolution); }`
    attempts_allowed_ = policy_.interval.count() == 0 ? 1 : std::max<long long>(0, budget / policy_.interval) + 1;
  }
}

std::optional<RetrySchedule::Clock::time_point> RetrySchedule::within_deadline(Clock::time_point due,
                                                                               Clock::time_point now) const {
  if (now >= deadline_) return std::nullopt;
  return std::min(due, deadline_);
}

std::optional<RetrySchedule::Clock::time_point> RetrySchedule::next(
    Clock::time_point now, std::optional<std::chrono::milliseconds> holder_remaining) {
  ++failures_;
  switch (policy_.kind) {
    case RetryPolicy::Kind::jedis_lock:
      if (attempts_allowed_ >= 0 && failures_ >= attempts_allowed_) return std::nullopt;
      return now + policy_.interval;  // the deadline is not what jedis-lock counts
    case RetryPolicy::Kind::fixed_count:
      if (failures_ > policy_.retries) return std::nullopt;
      return within_deadline(now + policy_.interval, now);
    case RetryPolicy::Kind::backoff: {
      // initial * 2^(failures - 1), without overflowing: the cap is reached long before.
      auto bound = std::chrono::nanoseconds(policy_.initial);
      for (int i = 1; i < failures_ && bound < policy_.cap; ++i) bound *= 2;
      bound = std::min<std::chrono::nanoseconds>(bound, policy_.cap);
      auto sleep = uniform_up_to(bound);
      // The key frees itself when the holder's lease ends: be there, not a backoff step later.
      if (holder_remaining) sleep = std::min<std::chrono::nanoseconds>(sleep, *holder_remaining);
      return within_deadline(now + sleep, now);
    }
  }
  return std::nullopt;
}

}  // namespace lockbridge::detail
