// legacy: the SETNX + GETSET expiry-timestamp lock of jedis-lock 1.0.0 and its copies.
//
// LegacyFaithful sends exactly jedis-lock 1.0.0's commands (SETNX, GET, GETSET, DEL) and judges
// expiry by this machine's wall clock, flaws included. LegacyHardened leaves the same bytes in the
// key but acquires, takes over and extends in one Lua call stamped by Redis TIME, sets a safety
// TTL, and releases only its own value. docs/design.md compares the two.
#pragma once

#include "strategies/strategy.hpp"

namespace lockbridge::detail {

class LegacyFaithful final : public LockStrategy {
 public:
  LegacyFaithful(const LegacyOptions& options, ScriptCache& scripts);

  Task<AcquireAttempt> try_acquire(Link& link, std::string_view key, const AttemptRequest& request) override;
  Task<ReleaseOutcome> release(Link& link, std::string_view key, std::string_view value,
                               std::string_view release_channel) override;
  ScriptCall extend_call(std::string_view key, std::string_view value, std::chrono::milliseconds lease) const override;
  std::optional<std::string> extend_outcome(const redisReply& reply, std::string_view key,
                                            std::string_view value) const override;
  Task<LockInfo> inspect(Link& link, std::string_view key, std::string_view my_value) override;

 private:
  LegacyOptions options_;
  std::string owner_;  // uuid_ms: this lock object's UUID, as jedis-lock master keeps one per object
};

class LegacyHardened final : public LockStrategy {
 public:
  LegacyHardened(const MutexOptions& options, ScriptCache& scripts);

  Task<AcquireAttempt> try_acquire(Link& link, std::string_view key, const AttemptRequest& request) override;
  Task<ReleaseOutcome> release(Link& link, std::string_view key, std::string_view value,
                               std::string_view release_channel) override;
  ScriptCall extend_call(std::string_view key, std::string_view value, std::chrono::milliseconds lease) const override;
  std::optional<std::string> extend_outcome(const redisReply& reply, std::string_view key,
                                            std::string_view value) const override;
  Task<LockInfo> inspect(Link& link, std::string_view key, std::string_view my_value) override;
  Task<void> leave_queue(Link& link, std::string_view key, std::string_view queued_waiter) override;
  bool queues_waiters() const noexcept override { return true; }
  bool announces_to_waiters() const noexcept override { return true; }

 private:
  struct ScriptResult {
    bool written = false;
    std::optional<std::string> value;  // written: ours; otherwise the key's current value
    std::int64_t server_now_ms = 0;
    std::int64_t pttl_ms = -1;  // not written, or granted: the key's PTTL (-1 no TTL, -2 gone)
    bool granted = false;       // written by a release's grant to this waiter (docs/design.md §10.6)
  };
  // The acquire script: a new stamp if the key is free (`expected` empty) or still holds `expected`;
  // for a queued waiter (`request`'s queued_waiter), when free and allowed, or handed to it.
  ScriptCall acquire_call(std::string_view key, std::chrono::milliseconds lease, std::string_view expected,
                          const AttemptRequest* request = nullptr) const;
  std::string unit() const;
  char stamp_kind() const;
  // A queued waiter that took over an expired lock leaves its queue, which the takeover's script
  // does not know: a release would otherwise grant the lock to its stale entry. Never throws.
  Task<void> leave_queue_after_takeover(Link& link, std::string_view key, const AttemptRequest& request);  // a grant spec's kind (scripts.hpp, kGrantPrelude): 's' or 'm'  // the acquire script's ARGV[3]: "s" or "ms"
  static ScriptResult read_acquire_reply(const redisReply& reply, const ReplyContext& context);
  Task<ScriptResult> run_acquire_script(Link& link, std::string_view key, std::chrono::milliseconds lease,
                                        std::string_view expected, const AttemptRequest* queued = nullptr);

  LegacyOptions options_;
  std::string owner_;
  std::string waiter_timeout_ms_;  // queued waiters' MutexOptions::fair_waiter_timeout
};

}  // namespace lockbridge::detail
