#include "lockbridge/options.hpp"

#include <string>

#include "lockbridge/error.hpp"
#include "util/option_limits.hpp"

namespace lockbridge {

MutexOptions MutexOptions::jedis_lock_1_0() {
  MutexOptions options;
  options.strategy = StrategyKind::legacy;
  options.legacy.preset = LegacyPreset::faithful;
  options.legacy.format = LegacyFormat::epoch_ms;
  options.lease = std::chrono::milliseconds(60000);
  options.acquire_timeout = std::chrono::milliseconds(10000);
  options.retry = RetryPolicy::jedis_lock_resolution(std::chrono::milliseconds(100));
  options.wait_mode = WaitMode::poll;  // jedis-lock peers never announce a release
  options.local_queue = false;         // every thread attempts on its own, as jedis-lock's do
  return options;
}

MutexOptions MutexOptions::redisson_lock() {
  MutexOptions options;
  options.strategy = StrategyKind::redisson;
  options.lease = std::chrono::milliseconds(30000);
  options.watchdog.enabled = true;  // renews every lease / 3 = 10 s, as Redisson's watchdog does
  return options;
}

MutexOptions MutexOptions::redisson_spin_lock() {
  MutexOptions options = redisson_lock();
  options.wait_mode = WaitMode::poll;
  options.retry = RetryPolicy::backoff_with_jitter(std::chrono::milliseconds(1), std::chrono::milliseconds(128));
  return options;
}

void MutexOptions::validate() const {
  using detail::kMaxDuration;
  using detail::require_within;
  using std::chrono::milliseconds;
  require_within("lease", lease, milliseconds(1));
  require_within("acquire_timeout", acquire_timeout, milliseconds::zero());
  require_within("retry.initial", retry.initial, milliseconds::zero());
  require_within("retry.cap", retry.cap, milliseconds::zero());
  require_within("retry.interval", retry.interval, milliseconds::zero());
  if (retry.retries < 0 || retry.retries > 1'000'000) {
    throw Error(Errc::bad_option, "retry.retries must be between 0 and 1000000, got " + std::to_string(retry.retries));
  }
  require_within("legacy.safety_ttl_grace", legacy.safety_ttl_grace, milliseconds::zero());
  require_within("fair_waiter_timeout", fair_waiter_timeout, milliseconds(3));
  require_within("starvation_after", starvation_after, milliseconds::zero());
  require_within("grant_lease", grant_lease, milliseconds(1));
  require_within("watchdog.max_hold", watchdog.max_hold, milliseconds(1));
  if (watchdog.enabled && faithful()) {
    throw Error(Errc::bad_option,
                "watchdog: the faithful legacy preset cannot renew a lease (jedis-lock 1.0.0 has "
                "no extend); use the hardened preset or the token strategy");
  }
  if (strategy == StrategyKind::redisson && !token.fixed_value.empty()) {
    throw Error(Errc::bad_option, "token.fixed_value needs the token strategy; Redisson names holders by field");
  }
  if (strategy == StrategyKind::redisson && token.fencing && wait_mode == WaitMode::fair) {
    throw Error(Errc::bad_option,
                "token.fencing with the redisson strategy is Redisson's RFencedLock, which has no fair "
                "mode: choose fencing or wait_mode fair");
  }
  if (wait_mode == WaitMode::fair && strategy == StrategyKind::legacy) {
    throw Error(Errc::bad_option,
                "wait_mode fair needs the token or redisson strategy: legacy peers know no queue and "
                "would take the lock out of turn");
  }
  require_within("redisson.fair_wait", redisson.fair_wait, milliseconds(1));
  if (replica_ack.replicas < 0 || replica_ack.replicas > 1000) {
    throw Error(Errc::bad_option,
                "replica_ack.replicas must be between 0 and 1000, got " + std::to_string(replica_ack.replicas));
  }
  require_within("replica_ack.timeout", replica_ack.timeout, milliseconds::zero());
  if (replica_ack.replicas > 0 && faithful()) {
    throw Error(Errc::bad_option,
                "replica_ack needs a strategy that releases only its own value: the faithful "
                "preset's release is a plain DEL");
  }
  if (!legacy.owner.empty()) {
    const auto parsed = parse_legacy_value(legacy.owner + ":0", LegacyFormat::uuid_ms);
    if (legacy.format != LegacyFormat::uuid_ms || !parsed || parsed->owner != legacy.owner) {
      throw Error(Errc::bad_option,
                  "legacy.owner must be a lowercase 8-4-4-4-12 UUID, and only with the uuid_ms format");
    }
  }
  if (legacy.jedis_lock_master && !(faithful() && legacy.format == LegacyFormat::uuid_ms)) {
    throw Error(Errc::bad_option,
                "legacy.jedis_lock_master needs the legacy strategy, the faithful preset and the "
                "uuid_ms format (it copies jedis-lock master exactly)");
  }
  if (legacy.clock_offset < -kMaxDuration || legacy.clock_offset > kMaxDuration) {
    throw Error(Errc::bad_option, "legacy.clock_offset must be within +-365 days, got " +
                                      std::to_string(legacy.clock_offset.count()) + " ms");
  }
}

RetryPolicy RetryPolicy::backoff_with_jitter(std::chrono::milliseconds initial, std::chrono::milliseconds cap) {
  RetryPolicy policy;
  policy.kind = Kind::backoff;
  policy.initial = initial;
  policy.cap = cap;
  return policy;
}

RetryPolicy RetryPolicy::jedis_lock_resolution(std::chrono::milliseconds resolution) {
  RetryPolicy policy;
  policy.kind = Kind::jedis_lock;
  policy.interval = resolution;
  return policy;
}

RetryPolicy RetryPolicy::fixed_retries(int retries, std::chrono::milliseconds interval) {
  RetryPolicy policy;
  policy.kind = Kind::fixed_count;
  policy.retries = retries;
  policy.interval = interval;
  return policy;
}

}  // namespace lockbridge
