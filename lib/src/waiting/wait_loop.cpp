#include "waiting/wait_loop.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "lockbridge/identity.hpp"
#include "redis/client_state.hpp"
#include "waiting/retry_schedule.hpp"
#include "waiting/wait_driver.hpp"

namespace lockbridge::detail {

namespace {
using Clock = std::chrono::steady_clock;

// A waiter's place in a queue in Redis (fair mode's, or notify mode's), left when the
// wait ends without the lock (an acquisition takes it out of the queue itself).
struct QueueSeat {
  ~QueueSeat() {
    if (!waiter.empty() && !taken) driver.leave_queue(waiter);
  }
  // From the next attempt on, the waiter queues under a fresh id: drawn only now, so that a wait
  // that never queues (the uncontended path) costs nothing. "<tag>-<random>" with a tag: releases
  // naming it are announced on its Client's own channel (WaitPlan::waiter_tag).
  void take() {
    if (waiter.empty()) waiter = tag.empty() ? random_token() : tag + "-" + random_token();
  }
  bool queued() const noexcept { return !waiter.empty(); }

  WaitDriver& driver;
  const std::string& tag;
  std::string waiter;  // empty while not queued
  bool taken = false;
};

// The hold a grant message's terms ("<tag> <fence> <value>", docs/design.md §10.6) give this
// waiter, or nullopt when they are for another of its attempts or unreadable. `request` is the
// last attempt's, begun at `started`: the grant ran after that attempt did (a grant made before it
// would have been found by it), so its lease ends no sooner than `started` + its grant lease.
std::optional<TargetAttempt> granted_hold(std::string_view terms, const AttemptRequest& request,
                                          Clock::time_point started) {
  const auto tag_end = terms.find(' ');
  const auto fence_end = tag_end == std::string_view::npos ? tag_end : terms.find(' ', tag_end + 1);
  if (fence_end == std::string_view::npos) return std::nullopt;
  if (terms.substr(0, tag_end) != std::to_string(request.grant_tag)) return std::nullopt;
  std::uint64_t fence = 0;
  for (const char digit : terms.substr(tag_end + 1, fence_end - tag_end - 1)) {
    if (digit < '0' || digit > '9') return std::nullopt;
    fence = fence * 10 + static_cast<std::uint64_t>(digit - '0');
  }
  TargetAttempt hold;
  hold.acquired = true;
  hold.granted = true;
  hold.value.assign(terms.substr(fence_end + 1));
  hold.valid_until = started + request.grant_lease;
  if (fence > 0) hold.fence = fence;  // fences start at 1: 0 says none was drawn
  return hold;
}

// The loop once this waiter may contend in Redis (first in the local line, or without one); the
// wait began at `began`. A coroutine of its own, so that a waiter still in the line keeps only
// wait_steps' small frame, not this one's, which holds every decision's state.
Task<bool> contend(WaitDriver& driver, const WaitPlan& plan, Clock::time_point deadline, Clock::time_point began) {
  const MutexOptions& options = plan.options;
  RetrySchedule schedule(options.retry, Clock::now(), deadline);
  const bool fair = options.wait_mode == WaitMode::fair;
  const bool backoff = options.retry.kind == RetryPolicy::Kind::backoff;
  const bool notify = options.wait_mode != WaitMode::poll && plan.channel.has_value();
  // Notify mode's queue (docs/design.md §10.5): from its second attempt on, a waiter queues in
  // Redis, so that a release wakes the first waiter alone rather than every one, and hands the
  // lock to it once it starves (it has waited starvation_after, counted from this call).
  const bool queues = notify && !fair && plan.queues_waiters;
  const auto starving_from = began + options.starvation_after;
  QueueSeat seat{driver, plan.waiter_tag, {}};
  if (fair) seat.take();
  // An observed wait is told once, as the bound passes, that it starves: only once an attempt has
  // queued it in Redis, where a release then hands it the lock. Redis counts the bound from when
  // it ran the joining attempt (its time plus the ms the request said were left), which may be
  // later than this call counts it when the request was slow to get there: the event waits until
  // Redis is sure to see the waiter starving, so that a release after it hands the lock over.
  // Waits that starve at once (a bound of 0, the default) report nothing: every queued wait would.
  const bool tells_starving = queues && plan.tells_starving && options.starvation_after.count() > 0;
  auto starving_in_redis = Clock::time_point::max();  // set when a queued attempt returns
  bool told_starving = false;
  const auto tell_if_starving = [&] {
    if (!tells_starving || told_starving || Clock::now() < starving_in_redis) return;
    told_starving = true;
    driver.starving(Clock::now() - began);
  };
  if (notify) driver.listen_if_subscribed();  // from before the first attempt, at no cost
  // The first attempt is the uncontended fast path, unless this lock was just handed on to a
  // starving waiter: then others are queued, and the first attempt joins them (subscribed first,
  // as below, so that a release between the attempt and the wait is heard).
  if (queues && plan.others_queued) {
    seat.take();
    if (!driver.listening()) co_await driver.listen(deadline);
  }
  AttemptRequest request{options.lease, seat.queued(), seat.waiter, deadline};
  // A release may grant the lock to a starving queued waiter outright (docs/design.md §10.6), for
  // the lease at most grant_lease, unless the replicas must acknowledge the acquisition (the waiter
  // then claims what it was handed with an attempt of its own, which waits for them).
  if (options.replica_ack.replicas <= 0) request.grant_lease = std::min(options.lease, options.grant_lease);
  auto attempt_started = Clock::now();
  std::optional<Clock::time_point> due;  // the policy's next attempt
  bool heartbeat = false;                // this attempt came early, to keep a queued place
  for (bool attempted = false;; attempted = true) {
    if (plan.line) co_await driver.wait_while_held_here(deadline);
    // After the first attempt, as a deadline already past: the seat is left as a deadline leaves it.
    if (attempted && plan.stop.stop_requested()) co_return false;
    if (queues) {
      request.starving_in = std::chrono::ceil<std::chrono::milliseconds>(starving_from - Clock::now());
    }
    driver.arm();
    ++request.grant_tag;
    attempt_started = Clock::now();
    const TargetAttempt result = co_await driver.attempt(request);
    if (result.acquired) {
      seat.taken = true;
      co_return true;
    }
    if (tells_starving && starving_in_redis == Clock::time_point::max() && !request.queued_waiter.empty()) {
      // The joining attempt ran before now; the bound it carried (never below 0: starving_in_arg)
      // runs from then, +1 ms as Redis counts in whole milliseconds.
      const auto carried = std::max(request.starving_in, std::chrono::milliseconds(0));
      starving_in_redis = std::max(starving_from, Clock::now() + carried + std::chrono::milliseconds(1));
    }
    tell_if_starving();
    driver.drop_if_redirected();
    // A set of keys listens where it is blocked now (another key than before, perhaps).
    if (notify && result.blocked_on) driver.switch_to(*result.blocked_on);
    if (queues && !seat.queued()) {
      // The first attempt failed: queue, subscribed first (a release between the two attempts is
      // then heard), and try again at once; that attempt joins the queue and learns when the
      // holder's lease ends. The policy does not count it.
      seat.take();
      request.queued_waiter = seat.waiter;
      request.learn_remaining = true;
      if (!driver.listening()) co_await driver.listen(deadline);
      continue;
    }
    const bool queued = seat.queued();
    const bool asked_remaining = std::exchange(request.learn_remaining, true);
    if (!queued && !asked_remaining && !plan.always_learns_remaining && !result.holder_remaining && backoff) {
      // The fast first attempt did not learn when the holder's lease ends, and the backoff must
      // never sleep past it: try again at once, learning it (subscribed first, in notify mode).
      if (notify && !driver.listening()) co_await driver.listen(deadline);
      continue;
    }
    if (!heartbeat) due = schedule.next(Clock::now(), result.holder_remaining);
    if (!due) co_return false;
    if (queued && driver.listening() && backoff) {
      // A release wakes the queued waiter whose turn it is, by name: backing off sooner only
      // spends round trips. Wait for the message, or for the holder's lease to end (a holder that
      // died announces nothing); the heartbeat below keeps the place alive.
      const auto lease_end =
          result.holder_remaining ? Clock::now() + *result.holder_remaining : Clock::time_point::max();
      due = std::max(*due, std::min(deadline, lease_end));
    }
    // A release between the failed attempt and the subscription went unheard: once the server
    // confirms the subscription, bring the due attempt forward. The policy still counts it, so a
    // lock that keeps changing hands cannot make this loop spin past the policy.
    if (notify && !driver.listening() && co_await driver.listen(*due)) continue;
    // A queued waiter asks again in time to keep its place.
    const auto wake_by = queued ? std::min(*due, Clock::now() + options.fair_waiter_timeout / 3) : *due;
    // Announcements that name another waiter are for it: they do not wake this one.
    bool heard = false;
    if (tells_starving && !told_starving && starving_in_redis < wake_by) {
      heard = co_await driver.wait_until(starving_in_redis, seat.waiter);
      if (!heard) tell_if_starving();
    }
    if (!heard) heard = co_await driver.wait_until(wake_by, seat.waiter);
    if (heard && queued) {
      // The release may have made this waiter the holder: then the message says so, and no
      // attempt is needed (one that missed it finds the grant, so nothing is lost either way).
      const std::optional<std::string> terms = driver.grant_heard(seat.waiter);
      if (terms) {
        const auto hold = granted_hold(*terms, request, attempt_started);
        // Counted from the last attempt, the grant's lease may look nearly over (that attempt
        // was long before the release): the next attempt then finds the grant with what is
        // really left of it, at one round trip.
        if (hold && hold->valid_until - Clock::now() >= request.grant_lease / 2) {
          driver.hold_granted(*hold, Clock::now());
          seat.taken = true;
          co_return true;
        }
      }
    }
    heartbeat = !heard && queued && Clock::now() < *due;
  }
}

}  // namespace

Task<bool> wait_steps(WaitDriver& driver, const WaitPlan& plan, Clock::time_point deadline) {
  const auto began = Clock::now();
  if (plan.line && !co_await driver.wait_for_turn(deadline)) co_return false;
  co_return co_await contend(driver, plan, deadline, began);
}

}  // namespace lockbridge::detail
