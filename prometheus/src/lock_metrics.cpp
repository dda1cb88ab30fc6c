#include "lock_metrics.hpp"

#include <chrono>
#include <utility>

#include "lockbridge/error.hpp"

namespace lockbridge::detail {
namespace {

using Buckets = prometheus::Histogram::BucketBoundaries;

// Waits: from a free lock's two round trips (tens of microseconds) to a timeout (seconds).
const Buckets kWaitBuckets{25e-6, 50e-6,  100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3,
                           50e-3, 100e-3, 250e-3, 500e-3, 1,      2.5,  5,      10,   30};
// Holds: the same, and the minutes a job may hold a lock for.
const Buckets kHoldBuckets{25e-6,  50e-6,  100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3,
                           100e-3, 250e-3, 500e-3, 1,      2.5,    5,    10,     30,   60,    300,   600};

double seconds(std::chrono::nanoseconds duration) { return std::chrono::duration<double>(duration).count(); }

std::string outcome_of(const std::error_code& error) { return error ? "error" : "timeout"; }

}  // namespace

LockMetrics::LockMetrics(prometheus::Registry& registry, PrometheusOptions options)
    : options_(std::move(options)),
      acquisitions_(prometheus::BuildCounter()
                        .Name("lockbridge_acquisitions_total")
                        .Help("Calls that asked for a lock, by outcome: acquired, timeout (the retry policy gave up) "
                              "or error")
                        .Register(registry)),
      acquire_wait_(prometheus::BuildHistogram()
                        .Name("lockbridge_acquire_wait_seconds")
                        .Help("How long a call asking for a lock took, by outcome")
                        .Register(registry)),
      hold_(prometheus::BuildHistogram()
                .Name("lockbridge_hold_seconds")
                .Help("How long a lock was held, from its acquisition to its release")
                .Register(registry)),
      releases_(prometheus::BuildCounter()
                    .Name("lockbridge_releases_total")
                    .Help("Releases, by outcome: released, lost (the lock was not ours any more) or error (not "
                          "confirmed; the lease runs out)")
                    .Register(registry)),
      leases_lost_(prometheus::BuildCounter()
                       .Name("lockbridge_leases_lost_total")
                       .Help("Held locks that stopped being ours, by reason: expired, deleted, taken, connection, "
                             "replication")
                       .Register(registry)),
      renewals_(prometheus::BuildCounter()
                    .Name("lockbridge_renewals_total")
                    .Help("Leases the watchdog renewed")
                    .Register(registry)
                    .Add({})),
      locks_held_(prometheus::BuildGauge()
                      .Name("lockbridge_locks_held")
                      .Help("Locks held now: acquired, and neither released nor lost")
                      .Register(registry)) {}

prometheus::Labels LockMetrics::labels(const LockEvent& event, prometheus::Labels more) const {
  more.emplace("strategy", std::string(event.strategy));
  if (options_.key_label) more.emplace("key", options_.key_label(event.key));
  return more;
}

void LockMetrics::acquired(const AcquiredEvent& event) {
  acquisitions_.Add(labels(event, {{"outcome", "acquired"}})).Increment();
  acquire_wait_.Add(labels(event, {{"outcome", "acquired"}}), kWaitBuckets).Observe(seconds(event.wait));
  prometheus::Gauge& held = locks_held_.Add(labels(event));
  held.Increment();
  std::lock_guard lock(mutex_);
  open_holds_.emplace(event.hold, &held);
}

void LockMetrics::not_acquired(const NotAcquiredEvent& event) {
  const std::string outcome = outcome_of(event.error);
  acquisitions_.Add(labels(event, {{"outcome", outcome}})).Increment();
  acquire_wait_.Add(labels(event, {{"outcome", outcome}}), kWaitBuckets).Observe(seconds(event.wait));
}

void LockMetrics::released(const ReleasedEvent& event) {
  std::string outcome = "released";
  if (event.error == make_error_code(Errc::lease_lost)) {
    outcome = "lost";
  } else if (event.error) {
    outcome = "error";
  }
  releases_.Add(labels(event, {{"outcome", outcome}})).Increment();
  hold_.Add(labels(event), kHoldBuckets).Observe(seconds(event.held));
  hold_ended(event.hold);
}

void LockMetrics::lease_lost(const LeaseLostEvent& event) {
  leases_lost_.Add(labels(event, {{"reason", std::string(to_string(event.reason))}})).Increment();
  hold_ended(event.hold);
}

void LockMetrics::renewed(const RenewedEvent& event) { renewals_.Increment(static_cast<double>(event.leases)); }

void LockMetrics::hold_ended(HoldId hold) {
  std::lock_guard lock(mutex_);
  const auto open = open_holds_.find(hold);
  if (open == open_holds_.end()) return;  // ended already (lost, then released), or its start was dropped
  open->second->Decrement();
  open_holds_.erase(open);
}

}  // namespace lockbridge::detail
