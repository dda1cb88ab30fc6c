// lockbridge: how a lock() that finds the key held waits for it.
//
// Two independent choices. The retry policy says when the next attempt is due if nothing else
// happens; the wait mode says what may bring it forward (a release message from the holder). The
// threads of one process that wait for the same lock also queue locally (MutexOptions::local_queue),
// so only the first of them contends in Redis and they are served in arrival order.
#pragma once

#include <array>
#include <chrono>
#include <optional>
#include <string_view>
#include <utility>

#include "lockbridge/export.hpp"
#include "lockbridge/name_table.hpp"

namespace lockbridge {

struct LOCKBRIDGE_API RetryPolicy {
  enum class Kind {
    // Default: exponential backoff with full jitter. The n-th sleep is drawn uniformly from
    // [0, min(cap, initial * 2^n)], and never runs past the moment the holder's lease ends when
    // the failed attempt learned it (the key's PTTL or its stored expiry).
    backoff,
    // jedis-lock: the acquire timeout is spent in steps of `interval`, as jedis-lock counts it:
    // timeout / interval + 1 attempts, `interval` apart. The time the commands take is not counted,
    // exactly as in jedis-lock, so the wall-clock wait can run slightly past the timeout.
    jedis_lock,
    // Plen-wang/redis-lock's RedisLocker: at most 1 + `retries` attempts, `interval` apart (RetryCount x
    // WaitLockTime), and never past the acquire timeout.
    fixed_count,
  };
  Kind kind = Kind::backoff;
  std::chrono::milliseconds initial{1};     // backoff: bound of the first sleep, doubled per attempt
  std::chrono::milliseconds cap{100};       // backoff: bound of every sleep
  std::chrono::milliseconds interval{100};  // jedis_lock and fixed_count: the sleep between attempts
  int retries = 10;                         // fixed_count: attempts after the first

  static RetryPolicy backoff_with_jitter(std::chrono::milliseconds initial = std::chrono::milliseconds(1),
                                         std::chrono::milliseconds cap = std::chrono::milliseconds(100));
  static RetryPolicy jedis_lock_resolution(std::chrono::milliseconds resolution = std::chrono::milliseconds(100));
  static RetryPolicy fixed_retries(int retries = 10,
                                   std::chrono::milliseconds interval = std::chrono::milliseconds(2000));
};

enum class WaitMode {
  poll,  // attempts follow the retry policy only
  // Default. A release publishes a message on the key's release channel (token and hardened
  // legacy; faithful legacy peers never publish), and a waiter subscribed to it retries as soon as
  // it arrives. The retry policy stays the fallback, so a lost message only costs time. Newcomers
  // may barge while waits are short; a waiter past MutexOptions::starvation_after is queued in
  // Redis and releases hand the lock to it (the starvation rule, docs/design.md §10.5).
  notify,
  // Token strategy only. notify, plus a first-come first-served queue in Redis across processes:
  // a waiter whose attempt fails is queued, the lock goes only to the first live waiter, and a
  // release wakes that waiter alone. A waiter that stops asking for fair_waiter_timeout (it died)
  // is skipped. Every party locking the key must use fair mode; others jump the queue.
  fair,
};

inline constexpr NameTable<WaitMode, 3> kWaitModeNames{std::array<std::pair<WaitMode, std::string_view>, 3>{
    {{WaitMode::poll, "poll"}, {WaitMode::notify, "notify"}, {WaitMode::fair, "fair"}}}};
inline constexpr NameTable<RetryPolicy::Kind, 3> kRetryKindNames{
    std::array<std::pair<RetryPolicy::Kind, std::string_view>, 3>{{{RetryPolicy::Kind::backoff, "backoff"},
                                                                   {RetryPolicy::Kind::jedis_lock, "jedis_lock"},
                                                                   {RetryPolicy::Kind::fixed_count, "fixed_count"}}}};

constexpr std::string_view to_string(WaitMode mode) noexcept { return kWaitModeNames.name(mode); }
constexpr std::string_view to_string(RetryPolicy::Kind kind) noexcept { return kRetryKindNames.name(kind); }
constexpr std::optional<WaitMode> wait_mode_from_string(std::string_view name) noexcept {
  return kWaitModeNames.parse(name);
}

}  // namespace lockbridge
