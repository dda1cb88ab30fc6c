// A lock on several keys, taken all or nothing by one script (kMultiAcquire) with one token, and
// released by one script that deletes every key still holding it (or hands them all to the first
// waiter once it starves). The keys are sorted and distinct (MultiMutex does it), so every process
// takes them in one order. Its waiters queue at the first key's companions.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/lock_target.hpp"
#include "core/routes.hpp"
#include "lockbridge/options.hpp"
#include "redis/client_state.hpp"

namespace lockbridge::detail {

class KeySetTarget final : public LockTarget {
 public:
  // `waiter_timeout`: MutexOptions::fair_waiter_timeout, how long a waiter stays queued
  // without asking again.
  // `routes`: how its operations reach the keys' server; null: the blocking front's.
  KeySetTarget(std::shared_ptr<ClientState> state, std::vector<std::string> keys,
               std::chrono::milliseconds waiter_timeout, std::shared_ptr<Routes> routes = nullptr);

  std::string describe(std::string_view operation) const override;
  const std::string& key() const noexcept override { return keys_.front(); }
  std::string event_key() const override;  // the keys, space-separated
  const std::vector<std::string>& keys() const noexcept { return keys_; }
  std::string line_name() const override { return lock_line_name(state_->url, keys_); }
  std::optional<ReleaseChannel> channel() const override { return ReleaseChannel{channels_.front()}; }
  // The script always reports the blocking key's PTTL.
  bool always_learns_remaining() const noexcept override { return true; }
  bool queues_waiters() const noexcept override { return true; }
  Task<TargetAttempt> attempt(const AttemptRequest& request) override;
  Task<void> leave_queue(std::string_view waiter) override;
  // Released only when every key still held the token (the others are left alone).
  Task<ReleaseOutcome> release(const std::string& value) override;
  std::string_view why_not_released() const noexcept override {
    return "some keys no longer held our token; those that still did were deleted";
  }
  // A set of keys has no extend or inspect yet: Error{bad_option}.
  Task<TargetExtension> extend(const std::string& value, std::chrono::milliseconds lease) override;
  Task<LockInfo> inspect(std::string_view mine) override;

 private:
  struct Released {
    std::size_t keys = 0;      // how many keys still held the token and were released
    bool handed_over = false;  // to a starving queued waiter
  };
  // kMultiRelease with `token`. Throws Error.
  Task<Released> release_all(std::string_view token);
  TargetAttempt parse_acquire(const redisReply& reply) const;

  const std::shared_ptr<ClientState> state_;
  const std::vector<std::string> keys_;
  const std::string waiter_timeout_ms_;
  std::vector<std::string> queue_keys_;      // the waiter queue and its times (of the first key)
  std::vector<std::string_view> key_views_;  // of keys_ and then queue_keys_: the scripts' KEYS
  std::vector<std::string> channels_;        // release_channel() of each key, in the same order
  const std::shared_ptr<Routes> routes_;
};

// "acquire 'a', 'b', 'c' and 2 more": the context of error messages about a set of keys.
std::string describe_keys(std::string_view operation, const std::vector<std::string>& keys);

// The target of a lock on `keys` with `options` (validated), for MultiMutex and the event-driven
// key set: refuses (Error{bad_option}) an empty list or key, a redlock:// Client, the legacy
// strategy, what a set of keys does not have yet (watchdog, fair mode, fencing, reentrant,
// replica_ack) and, on Redis Cluster, keys of different hash slots; removes duplicate keys and
// sorts the rest. `routes`: null, the blocking front's.
std::unique_ptr<KeySetTarget> make_key_set_target(const std::shared_ptr<ClientState>& state,
                                                  std::vector<std::string> keys, const MutexOptions& options,
                                                  std::shared_ptr<Routes> routes = nullptr);

}  // namespace lockbridge::detail
