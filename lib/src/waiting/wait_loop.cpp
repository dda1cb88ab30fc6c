#include "wait_loop.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "../client_state.hpp"
#include "lockbridge/identity.hpp"
#include "release_listener.hpp"
#include "retry_schedule.hpp"

namespace lockbridge::detail {

namespace {
using Clock = std::chrono::steady_clock;

// A fair waiter's id and its place in the Redis queue, left when the wait ends without the lock
// (an acquisition takes it out of the queue itself).
struct QueueSeat {
  ~QueueSeat() {
    if (!waiter.empty() && !taken) contender.leave_queue(waiter);
  }
  Contender& contender;
  const std::string waiter;  // empty when not in fair mode
  bool taken = false;
};
}  // namespace

bool wait_for_lock(Contender& contender, const WaitPlan& plan, Clock::time_point deadline) {
  const MutexOptions& options = plan.options;
  std::optional<LocalLine::Place> place;
  if (plan.line) {
    place.emplace(plan.line);
    if (!place->wait_for_turn(deadline)) return false;
  }
  RetrySchedule schedule(options.retry, Clock::now(), deadline);
  const bool fair = options.wait_mode == WaitMode::fair;
  const bool backoff = options.retry.kind == RetryPolicy::Kind::backoff;
  const bool notify = options.wait_mode != WaitMode::poll && plan.channel.has_value();
  QueueSeat seat{contender, fair ? random_token() : std::string()};
  ReleaseListener listener(plan.state, plan.channel.value_or(ReleaseChannel{}));
  if (notify) listener.listen_if_subscribed();                          // from before the first attempt, at no cost
  AttemptRequest request{options.lease, false, seat.waiter, deadline};  // first: the uncontended fast path
  std::optional<Clock::time_point> due;                                 // the policy's next attempt
  bool heartbeat = false;  // this attempt came early, only to keep a fair seat
  for (;;) {
    if (place) place->wait_while_held_here(deadline);
    listener.arm();
    const TargetAttempt result = contender.attempt(request);
    if (result.acquired) {
      seat.taken = true;
      return true;
    }
    listener.drop_if_redirected();
    const bool asked_remaining = std::exchange(request.learn_remaining, true);
    if (!fair && !asked_remaining && !plan.always_learns_remaining && !result.holder_remaining && backoff) {
      // The fast first attempt did not learn when the holder's lease ends, and the backoff must
      // never sleep past it: try again at once, learning it (subscribed first, in notify mode).
      if (notify && !listener.listening()) listener.listen(deadline);
      continue;
    }
    if (!heartbeat) due = schedule.next(Clock::now(), result.holder_remaining);
    if (!due) return false;
    if (fair && listener.listening() && backoff) {
      // A fair release is announced to the waiter whose turn it is, by name: backing off sooner
      // only spends round trips. Wait for the message, or for the holder's lease to end (a holder
      // that died announces nothing); the heartbeat below keeps the seat alive.
      const auto lease_end =
          result.holder_remaining ? Clock::now() + *result.holder_remaining : Clock::time_point::max();
      due = std::max(*due, std::min(deadline, lease_end));
    }
    if (notify) {
      // A set of keys listens where it is blocked now (another key than before, perhaps).
      if (result.blocked_on) listener.switch_to(*result.blocked_on);
      // A release between the failed attempt and the subscription went unheard: once the server
      // confirms the subscription, bring the due attempt forward. The policy still counts it, so
      // a lock that keeps changing hands cannot make this loop spin past the policy.
      if (!listener.listening() && listener.listen(*due)) continue;
    }
    const auto wake_by = fair ? std::min(*due, Clock::now() + options.fair_waiter_timeout / 3) : *due;
    const bool heard = listener.wait_until(wake_by, seat.waiter);
    heartbeat = fair && !heard && Clock::now() < *due;
  }
}

}  // namespace lockbridge::detail
