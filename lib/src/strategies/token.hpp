// token: SET key <128-bit random token> NX PX lease; release and extend are owner-checked Lua.
// With fencing, in fair mode or for a queued waiter the acquire is a script too (it also draws
// the fence or keeps the queue), and a release grants the lock to a starving waiter instead of
// freeing it, docs/design.md 4.4, 10.4, 10.5 and 10.6.
#pragma once

#include "strategies/strategy.hpp"

namespace lockbridge::detail {

class TokenStrategy final : public LockStrategy {
 public:
  TokenStrategy(const MutexOptions& options, ScriptCache& scripts);

  Task<AcquireAttempt> try_acquire(Link& link, std::string_view key, const AttemptRequest& request) override;
  Task<void> leave_queue(Link& link, std::string_view key, std::string_view queued_waiter) override;
  // In notify and poll mode; fair mode queues everyone anyway.
  bool queues_waiters() const noexcept override { return !fair_; }
  bool announces_to_waiters() const noexcept override { return true; }
  Task<ReleaseOutcome> release(Link& link, std::string_view key, std::string_view value,
                               std::string_view release_channel) override;
  ScriptCall extend_call(std::string_view key, std::string_view value, std::chrono::milliseconds lease) const override;
  std::optional<std::string> extend_outcome(const redisReply& reply, std::string_view key,
                                            std::string_view value) const override;
  Task<LockInfo> inspect(Link& link, std::string_view key, std::string_view my_value) override;
  Task<void> abandon_attempt(Link& link, std::string_view key) override;

 private:
  Task<AcquireAttempt> acquire_by_set(Link& link, std::string_view key, const std::string& lease_ms,
                                      bool learn_remaining);
  Task<AcquireAttempt> acquire_by_script(Link& link, std::string_view key, const std::string& lease_ms,
                                         const AttemptRequest& request);
  // The queue this strategy's waiters join: fair mode's, else notify mode's.
  std::string queue_of(std::string_view key) const;
  std::string deadlines_of(std::string_view key) const;

  const bool fencing_;
  const std::string fixed_value_;  // TokenOptions::fixed_value: one identity instead of a token per attempt
  const bool fair_;
  const std::string waiter_timeout_ms_;  // queued waiters
  std::string last_token_;               // of the last attempt, for abandon_attempt
  bool set_nx_get_ = true;               // false once the server refused SET ... NX GET (Redis < 7.0)
};

}  // namespace lockbridge::detail
