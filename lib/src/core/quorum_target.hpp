// A lock on one key held on a majority of independent masters (Redlock, redlock:// Clients): each
// call is one round to every master at once (redlock/quorum.hpp). Redlock's masters announce no
// releases, so its waiters poll, and nothing renews a lease in the background (no watchdog).
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
  // Throws Error{bad_option} for options a quorum cannot give (require_redlock_options).
  QuorumTarget(std::shared_ptr<ClientState> state, std::string key, const MutexOptions& options);

  std::string describe(std::string_view operation) const override { return detail::describe(operation, key_); }
  const std::string& key() const noexcept override { return key_; }
  std::string identity() const override;
  std::optional<ReleaseChannel> channel() const override { return std::nullopt; }
  // Each round runs in place, on every master at once (the quorum is blocking-only).
  Task<TargetAttempt> attempt(const AttemptRequest& request) override;
  Task<ReleaseOutcome> release(const std::string& value) override {
    co_return quorum_.release(key_, value) > 0 ? ReleaseOutcome::released : ReleaseOutcome::not_ours;
  }
  Task<TargetExtension> extend(const std::string& value, std::chrono::milliseconds lease) override;
  Task<LockInfo> inspect(std::string_view mine) override { co_return quorum_.inspect(key_, mine); }

 private:
  const std::shared_ptr<ClientState> state_;
  const std::string key_;
  const std::string fixed_value_;  // TokenOptions::fixed_value: written instead of a fresh token
  Quorum quorum_;
};

}  // namespace lockbridge::detail
