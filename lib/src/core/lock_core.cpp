#include "core/lock_core.hpp"

#include "waiting/blocking_wait.hpp"
#include "waiting/change_wait.hpp"
#include "waiting/event_wait.hpp"

#include <algorithm>
#include <optional>
#include <utility>

namespace lockbridge::detail {

LockCore::LockCore(std::shared_ptr<ClientState> state, std::unique_ptr<LockTarget> target, MutexOptions options,
                   std::string_view front, std::shared_ptr<EventLoop> loop)
    : state_(std::move(state)),
      target_(std::move(target)),
      options_(std::move(options)),
      front_(front),
      loop_(std::move(loop)),
      line_(options_.local_queue ? LocalLine::for_lock(target_->line_name()) : nullptr) {
  if (auto observer = options_.observer ? options_.observer : state_->observer) {
    events_ = LockEvents(std::move(observer), state_->events, target_->event_key(), strategy_label(options_));
  }
}

LockCore::~LockCore() { release(/*all=*/true); }

bool LockCore::holds() const noexcept {
  if (hold_count_ == 0) return false;
  // Ran out counts as soon as it happens on our clock, not when the lease keeper next looks: a
  // keeper held up (a slow connect, a starved thread) must not let owns_lock() say yes past the
  // lease, when Redis may have given the lock to someone else.
  const Lease::Snapshot lease = lease_->snapshot();
  return lease.held && Clock::now() < lease.valid_until;
}

bool LockCore::keep_hold_if_valid() {
  if (hold_count_ == 0) return false;
  if (lease_->snapshot().held) return true;
  end_hold();
  return false;
}

bool LockCore::hold_again() {
  if (!keep_hold_if_valid()) return false;
  if (!options_.reentrant)
    throw Error(Errc::bad_option, target_->describe("lock") + ": this " + front_ + " already holds it");
  ++hold_count_;
  return true;
}

template <class Acquire>
Task<bool> LockCore::observed_acquire(Acquire acquire) {
  // Nobody observes it: the acquiring call's own task, with no frame around it (each async
  // waiter's memory is mostly frames).
  if (!events_.observed()) return acquire();
  return observing(std::move(acquire));
}

template <class Acquire>
Task<bool> LockCore::observing(Acquire acquire) {
  const auto started = Clock::now();
  attempts_ = 0;
  starved_ = false;
  bool acquired = false;
  try {
    acquired = co_await acquire();
  } catch (const Error& error) {
    tell_not_acquired(started, error.code());
    throw;
  }
  if (acquired) {
    tell_acquired(started);
  } else {
    tell_not_acquired(started, {});
  }
  co_return acquired;
}

bool LockCore::try_once() {
  if (hold_again()) return true;
  const AttemptRequest request{options_.lease, false, {}, Clock::now()};
  return observed_acquire([&]() -> Task<bool> {
           const TargetAttempt result = co_await attempt(request);
           co_return result.acquired;
         })
      .run_now();
}

WaitPlan LockCore::wait_plan(std::stop_token stop) const {
  std::optional<ReleaseChannel> channel = target_->channel();
  std::string waiter_tag;
  if (channel && target_->announces_to_waiters()) {
    waiter_tag = state_->waiter_tag;
    channel->name += ":" + waiter_tag;
  }
  return WaitPlan{options_,
                  *state_,
                  line_,
                  std::move(channel),
                  std::move(waiter_tag),
                  target_->always_learns_remaining(),
                  target_->queues_waiters(),
                  events_.observed(),
                  handed_over_,
                  std::move(stop)};
}

bool LockCore::acquire_until(Clock::time_point deadline, std::stop_token stop) {
  if (hold_again()) return true;
  const WaitPlan plan = wait_plan(std::move(stop));
  BlockingWait driver(*this, plan);
  return acquire_with(driver, plan, deadline).run_now();
}

Task<bool> LockCore::acquire_on(std::shared_ptr<EventLoop> loop, Clock::time_point deadline, std::stop_token stop) {
  if (hold_again()) co_return true;
  const WaitPlan plan = wait_plan(std::move(stop));
  EventWait driver(*this, plan, std::move(loop));
  co_return co_await acquire_with(driver, plan, deadline);
}

Task<void> LockCore::leave_queue(std::string waiter) {
  // By value, in the coroutine's frame: the waiter's id and the target outlive this lock when the
  // task is left to go on by itself.
  const auto leave = [](std::shared_ptr<LockTarget> target, std::string id) -> Task<void> {
    co_await target->leave_queue(id);
  };
  return leave(target_, std::move(waiter));
}

Task<bool> LockCore::acquire_with(WaitDriver& driver, const WaitPlan& plan, Clock::time_point deadline) {
  // Not a coroutine itself: a waiter keeps one frame less.
  return observed_acquire([&driver, &plan, deadline] { return wait_steps(driver, plan, deadline); });
}

void LockCore::tell_acquired(Clock::time_point started) const noexcept {
  events_.acquired(hold_id_, held_since_ - started, attempts_, lease_ ? lease_->fence : std::nullopt, starved_);
}

void LockCore::tell_not_acquired(Clock::time_point started, std::error_code error) const noexcept {
  events_.not_acquired(Clock::now() - started, attempts_, error, starved_);
}

void LockCore::starving(std::chrono::nanoseconds waited) noexcept {
  starved_ = true;
  events_.starving(waited);
}

void LockCore::lock() {
  if (acquire_until(Clock::now() + options_.acquire_timeout)) return;
  throw Error(Errc::timeout, target_->describe("lock") + ": still held by another owner after " +
                                 std::to_string(options_.acquire_timeout.count()) + " ms");
}

Task<TargetAttempt> LockCore::attempt(const AttemptRequest& request) {
  const auto started = Clock::now();
  ++attempts_;
  TargetAttempt result = co_await target_->attempt(request);
  if (result.acquired) begin_hold(result, started);
  co_return result;
}

void LockCore::hold_granted(const TargetAttempt& attempt, Clock::time_point started) {
  ++attempts_;  // the grant stands for the attempt it spared
  begin_hold(attempt, started);
}

void LockCore::begin_hold(const TargetAttempt& attempt, Clock::time_point started) {
  std::optional<Lease::Renewal> renewal;
  if (options_.watchdog.enabled) {
    renewal = Lease::Renewal{options_.lease, started + options_.watchdog.max_hold};
  } else if (attempt.granted && attempt.valid_until < started + options_.lease) {
    // A grant's lease is grant_lease at most: once the hold lasts, it is topped up to the lease
    // asked for, once (a waiter that died, or stalls, keeps the lock no longer than the grant).
    renewal = Lease::Renewal{options_.lease, started + options_.lease, /*once=*/true};
  }
  if (line_) line_hold_ = line_->held_here(attempt.valid_until);
  // A loss the renewal thread finds also ends the hold in the local line, so a thread of this
  // process waiting there contends now rather than at the end of the lease it was told of.
  held_since_ = Clock::now();
  if (events_.observed()) hold_id_ = LockEvents::next_hold();
  auto on_lost = [line = line_, hold = line_hold_, handler = on_lease_lost_, events = events_, since = held_since_,
                  id = hold_id_](const Error& why, LeaseLossReason reason) {
    if (line) line->released_here(hold);
    if (events.observed()) events.lease_lost(id, reason, Clock::now() - since, why.what());
    if (handler) handler(why);
  };
  lease_ = std::make_shared<Lease>(target_->renewer(), target_->key(), attempt.value, attempt.valid_until,
                                   attempt.fence, renewal, std::move(on_lost), events_.observed());
  hold_count_ = 1;
  state_->keeper.keep(lease_);
}

void LockCore::end_hold() noexcept {
  hold_count_ = 0;
  state_->keeper.forget(*lease_);
  if (line_) line_->released_here(line_hold_);
}

void LockCore::release(bool all) noexcept {
  try {
    release_task(all).run_now();
  } catch (...) {  // release_task reports what fails; only a broken allocation could reach here
  }
}

Task<void> LockCore::release_task(bool all) {
  if (all && hold_count_ > 1) hold_count_ = 1;
  if (hold_count_ == 0 || --hold_count_ > 0) co_return;  // reentrant: an inner unlock
  state_->keeper.forget(*lease_);
  handed_over_ = false;
  try {
    const Lease::IoClaim io = co_await claim_lease_io();  // a renewal in flight finishes first; then none starts
    const std::string value = lease_->snapshot().value;
    lease_->released();
    const ReleaseOutcome outcome = co_await target_->release(value);
    handed_over_ = outcome == ReleaseOutcome::handed_over;
    if (outcome != ReleaseOutcome::not_ours) {
      last_error_.clear();
    } else {
      report(Error(Errc::lease_lost, target_->describe("release") + ": " + std::string(target_->why_not_released())));
    }
  } catch (const Error& error) {
    report(error);
  } catch (const std::exception& error) {
    report(Error(Errc::io, target_->describe("release") + ": " + error.what()));
  }
  if (line_) line_->released_here(line_hold_);
  if (events_.observed()) events_.released(hold_id_, Clock::now() - held_since_, last_error_, handed_over_);
}

Task<Lease::IoClaim> LockCore::claim_lease_io() {
  if (!loop_) co_return lease_->claim_io();
  // A renewal is one round trip: looking again every millisecond costs the loop next to nothing,
  // where waiting for it would hold every other lock of the loop meanwhile.
  for (;;) {
    Lease::IoClaim claim = lease_->try_claim_io();
    if (claim) co_return claim;
    co_await sleep_on(loop_, std::chrono::milliseconds(1));
  }
}

void LockCore::abandon() noexcept {
  if (hold_count_ == 0) return;
  try {
    const Lease::IoClaim io = lease_->claim_io();  // a renewal in flight finishes first
    lease_->released();
  } catch (...) {  // the claim cannot fail short of a broken std::mutex; the hold ends regardless
  }
  end_hold();
}

bool LockCore::extend(std::chrono::milliseconds lease) { return extend_task(lease).run_now(); }

Task<bool> LockCore::extend_task(std::chrono::milliseconds lease) {
  if (!keep_hold_if_valid())
    throw Error(Errc::bad_option, target_->describe("extend") + ": this " + front_ + " does not hold it");
  TargetExtension extension;
  {
    const Lease::IoClaim io = co_await claim_lease_io();
    const std::string value = lease_->snapshot().value;
    extension = co_await target_->extend(value, lease);
    if (extension.kind != TargetExtension::Kind::lost) lease_->renewed(extension.value, extension.valid_until);
  }
  switch (extension.kind) {
    case TargetExtension::Kind::released:  // replica_ack's shortfall: the hold is over, and the caller is told
      lease_->lost(*extension.error, LeaseLossReason::replication);
      end_hold();
      throw *extension.error;
    case TargetExtension::Kind::lost: {
      last_error_ = make_error_code(Errc::lease_lost);
      LeaseLossReason reason = LeaseLossReason::taken;
      if (events_.observed()) reason = co_await why_lost_on_extend();
      lease_->lost(Error(Errc::lease_lost, target_->describe("extend") + ": " + extension.why), reason);
      end_hold();
      co_return false;
    }
    case TargetExtension::Kind::extended:
      break;
  }
  last_error_.clear();
  if (line_) line_->extended_here(line_hold_, extension.valid_until);
  co_return true;
}

Task<LeaseLossReason> LockCore::why_lost_on_extend() const {
  bool exists = true;  // unreachable now: "taken" is the safer guess (someone else may hold it)
  try {
    const LockInfo info = co_await target_->inspect(std::string_view());
    exists = info.exists;
  } catch (...) {
  }
  co_return exists ? LeaseLossReason::taken : LeaseLossReason::deleted;
}

LockInfo LockCore::inspect() const {
  const std::string mine = holds() ? lease_->snapshot().value : std::string();
  return target_->inspect(mine).run_now();
}

std::chrono::milliseconds LockCore::valid_for() const noexcept {
  if (hold_count_ == 0) return std::chrono::milliseconds::zero();
  const Lease::Snapshot lease = lease_->snapshot();
  if (!lease.held) return std::chrono::milliseconds::zero();
  const auto left = lease.valid_until - Clock::now();
  return std::max(std::chrono::milliseconds::zero(), std::chrono::floor<std::chrono::milliseconds>(left));
}

std::string LockCore::value() const { return lease_ ? lease_->snapshot().value : std::string(); }
std::optional<std::uint64_t> LockCore::fence() const noexcept { return lease_ ? lease_->fence : std::nullopt; }
std::stop_token LockCore::lease_token() const noexcept { return lease_ ? lease_->stop_token() : std::stop_token(); }

void LockCore::report(const Error& error) noexcept {
  last_error_ = error.code();
  if (!on_release_error_) return;
  try {
    on_release_error_(error);
  } catch (...) {  // a throwing handler must not turn unlock() into std::terminate
  }
}

}  // namespace lockbridge::detail
