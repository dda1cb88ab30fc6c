// A lock on one key held on a majority of independent masters (Redlock, redlock:// Clients): each
// call is one round to every master at once (redlock/quorum.hpp), on the front's rounds. Redlock's
// masters announce no releases, so its waiters poll, and nothing renews a lease in the background
// (no watchdog).
#pragma once

#include <memory>
#include <string>

#include "core/lock_target.hpp"
#include "lockbridge/options.hpp"
#include "redis/client_state.hpp"
#include "redlock/quorum.hpp"

namespace lockbridge::detail {

class QuorumTarget final : public LockTarget {
 public:
  // Throws Error{bad_option} for options a quorum cannot give (require_redlock_options). `rounds`:
  // how the masters are reached; null: the blocking front's (PooledRounds over the Client's pools).
  QuorumTarget(std::shared_ptr<ClientState> state, std::string key, const MutexOptions& options,
               std::shared_ptr<QuorumRounds> rounds = nullptr);

  std::string describe(std::string_view operation) const override { return detail::describe(operation, key_); }
  const std::string& key() const noexcept override { return key_; }
  std::string line_name() const override;
  std::optional<ReleaseChannel> channel() const override { return std::nullopt; }
  Task<TargetAttempt> attempt(const AttemptRequest& request) override;
  Task<ReleaseOutcome> release(const std::string& value) override {
    const int deleted = co_await quorum_.release(key_, value);
    co_return deleted > 0 ? ReleaseOutcome::released : ReleaseOutcome::not_ours;
  }
  Task<TargetExtension> extend(const std::string& value, std::chrono::milliseconds lease) override;
  Task<LockInfo> inspect(std::string_view mine) override { co_return co_await quorum_.inspect(key_, mine); }

 private:
  const std::shared_ptr<ClientState> state_;
  const std::string key_;
  const std::string fixed_value_;  // TokenOptions::fixed_value: written instead of a fresh token
  const std::shared_ptr<QuorumRounds> rounds_;
  Quorum quorum_;
};

}  // namespace lockbridge::detail
