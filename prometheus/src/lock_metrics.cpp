#include "lock_metrics.hpp"

#include <array>
#include <chrono>
#include <utility>

#include "lockbridge/error.hpp"
#include "metric_parts.hpp"

namespace lockbridge::detail {

LockMetrics::LockMetrics(prometheus::Registry& registry, PrometheusOptions options)
    : options_(std::move(options)),
      acquisitions_(
          counters(registry, "lockbridge_acquisitions_total",
                   "Calls that asked for a lock, by outcome: acquired, timeout (the retry policy gave up) or error")),
      starving_waits_(counters(registry, "lockbridge_starving_waits_total",
                               "Waits that lasted past starvation_after (notify mode), from which on releases handed "
                               "the lock to them in arrival order")),
      acquire_wait_(histograms(registry, "lockbridge_acquire_wait_seconds",
                               "How long a call asking for a lock took, by outcome")),
      hold_(histograms(registry, "lockbridge_hold_seconds",
                       "How long a lock was held, from its acquisition to its release")),
      releases_(counters(registry, "lockbridge_releases_total",
                         "Releases, by outcome: released, handed_over (to a starving waiter), lost (the lock was not "
                         "ours any more) or error (not confirmed; the lease runs out)")),
      leases_lost_(
          counters(registry, "lockbridge_leases_lost_total",
                   "Held locks that stopped being ours, by reason: expired, deleted, taken, connection, replication")),
      renewals_(counters(registry, "lockbridge_renewals_total", "Leases the watchdog renewed").Add({})),
      locks_held_(gauges(registry, "lockbridge_locks_held", "Locks held now: acquired, and neither released nor lost")),
      counters_(registry, options_) {}

namespace {

constexpr std::array<const char*, 3> kAcquireOutcomes{"acquired", "timeout", "error"};
constexpr std::array<const char*, 4> kReleaseOutcomes{"released", "handed_over", "lost", "error"};

}  // namespace

LockMetrics::Series& LockMetrics::series_of(const LockEvent& event) {
  return series_in(series_, "strategy", event.strategy, event.key, options_);
}

void LockMetrics::count_acquire(Series& series, Acquire outcome, std::chrono::nanoseconds wait) {
  const auto at = static_cast<std::size_t>(outcome);
  made(series.acquisitions[at], acquisitions_, series.labels, {{"outcome", kAcquireOutcomes[at]}}).Increment();
  made(series.acquire_wait[at], acquire_wait_, series.labels, {{"outcome", kAcquireOutcomes[at]}}, kWaitBuckets)
      .Observe(seconds(wait));
}

void LockMetrics::acquired(const AcquiredEvent& event) {
  std::lock_guard lock(mutex_);
  Series& series = series_of(event);
  count_acquire(series, Acquire::acquired, event.wait);
  // A key has one holder in Redis, and a newer acquisition of it in this process (hold numbers
  // grow with acquisition order) means any older hold of it has ended. Each Client delivers its
  // events on its own thread, so the older hold's end may come after the newer one's start: it
  // ends here, and its own end event then finds it gone. Without that, one held lock read as 2 or
  // 3 in a scrape.
  if (const auto newest = newest_holds_.find(event.key); newest != newest_holds_.end()) {
    if (newest->second > event.hold) return;  // this hold ended before its start arrived
    hold_ended(newest->second);
  }
  prometheus::Gauge& held = made(series.locks_held, locks_held_, series.labels, {});
  held.Increment();
  open_holds_.emplace(event.hold, OpenHold{&held, event.key});
  newest_holds_[event.key] = event.hold;
}

void LockMetrics::not_acquired(const NotAcquiredEvent& event) {
  std::lock_guard lock(mutex_);
  count_acquire(series_of(event), event.error ? Acquire::error : Acquire::timeout, event.wait);
}

void LockMetrics::starving(const StarvingEvent& event) {
  std::lock_guard lock(mutex_);
  Series& series = series_of(event);
  made(series.starving_waits, starving_waits_, series.labels, {}).Increment();
}

void LockMetrics::released(const ReleasedEvent& event) {
  Release outcome = event.handed_over ? Release::handed_over : Release::released;
  if (event.error == make_error_code(Errc::lease_lost)) {
    outcome = Release::lost;
  } else if (event.error) {
    outcome = Release::error;
  }
  const auto at = static_cast<std::size_t>(outcome);
  std::lock_guard lock(mutex_);
  Series& series = series_of(event);
  made(series.releases[at], releases_, series.labels, {{"outcome", kReleaseOutcomes[at]}}).Increment();
  made(series.hold, hold_, series.labels, {}, kHoldBuckets).Observe(seconds(event.held));
  hold_ended(event.hold);
}

void LockMetrics::lease_lost(const LeaseLostEvent& event) {
  const auto at = static_cast<std::size_t>(event.reason);
  if (at >= kLossReasons) return;  // a reason newer than this table
  std::lock_guard lock(mutex_);
  Series& series = series_of(event);
  made(series.leases_lost[at], leases_lost_, series.labels, {{"reason", std::string(to_string(event.reason))}})
      .Increment();
  hold_ended(event.hold);
}

void LockMetrics::renewed(const RenewedEvent& event) { renewals_.Increment(static_cast<double>(event.leases)); }

void LockMetrics::hold_ended(HoldId hold) {
  const auto open = open_holds_.find(hold);
  // Ended already (lost, then released; or ended by a newer hold of its key), or its start was
  // dropped or came after a newer hold's.
  if (open == open_holds_.end()) return;
  open->second.gauge->Decrement();
  if (const auto newest = newest_holds_.find(open->second.key);
      newest != newest_holds_.end() && newest->second == hold) {
    newest_holds_.erase(newest);
  }
  open_holds_.erase(open);
}

}  // namespace lockbridge::detail
