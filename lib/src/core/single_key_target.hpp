// A lock on one key: one strategy's attempt, release, extend and inspect on the server holding the
// key (the pool's, or the master of its slot), plus replica acknowledgement (MutexOptions::replica_ack).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/lock_target.hpp"
#include "core/routes.hpp"
#include "lockbridge/options.hpp"
#include "redis/client_state.hpp"

namespace lockbridge::detail {

class SingleKeyTarget final : public LockTarget {
 public:
  // Throws Error{bad_option} for a key that cannot be locked on this Client's topology. `routes`:
  // how its operations reach the key's server; null: the blocking front's (BlockingRoutes).
  SingleKeyTarget(std::shared_ptr<ClientState> state, std::string key, const MutexOptions& options,
                  std::shared_ptr<Routes> routes = nullptr);
  // The same, with a strategy that `options` cannot name (a side of a read/write lock).
  SingleKeyTarget(std::shared_ptr<ClientState> state, std::string key, const MutexOptions& options,
                  std::shared_ptr<LockStrategy> strategy, std::shared_ptr<Routes> routes = nullptr);

  std::string describe(std::string_view operation) const override;
  const std::string& key() const noexcept override { return key_; }
  std::string line_name() const override;
  std::optional<ReleaseChannel> channel() const override { return channel_; }
  bool queues_waiters() const noexcept override { return strategy_->queues_waiters(); }
  bool announces_to_waiters() const noexcept override { return strategy_->announces_to_waiters(); }
  Task<TargetAttempt> attempt(const AttemptRequest& request) override;
  Task<ReleaseOutcome> release(const std::string& value) override;
  Task<TargetExtension> extend(const std::string& value, std::chrono::milliseconds lease) override;
  Task<LockInfo> inspect(std::string_view mine) override;
  Task<void> leave_queue(std::string_view waiter) override;
  std::shared_ptr<const LockStrategy> renewer() const noexcept override { return strategy_; }
  std::optional<int> replicas_acknowledged() const noexcept override { return replicas_acknowledged_; }

 private:
  // Runs `operation` on a link to the key's server; its errors name the key (naming_key), as
  // `name` ("acquire") says.
  Task<void> on_link(std::string_view name, const Routes::Operation& operation,
                     Clock::time_point deadline = Clock::time_point::max());
  // replica_ack: WAIT on the link that wrote `value` (WAIT counts that connection's writes).
  // false on a shortfall in release mode, after the lock was deleted again on the same
  // connection; in accept mode a shortfall is only recorded.
  Task<bool> replicas_acknowledge(Link& link, const std::string& value);
  Error replica_shortfall(std::string_view operation) const;
  // After an acquire whose reply was lost: undo it if it happened. Never throws.
  Task<void> abandon_unknown_attempt();

  const std::shared_ptr<ClientState> state_;
  const std::string key_;
  const ReplicaAckOptions replica_ack_;
  const std::shared_ptr<LockStrategy> strategy_;  // shared with the leases, which the renewal thread keeps
  const ReleaseChannel channel_;
  const std::shared_ptr<Routes> routes_;
  std::optional<int> replicas_acknowledged_;
};

}  // namespace lockbridge::detail
