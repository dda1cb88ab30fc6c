// A lock on one key: one strategy's attempt, release, extend and inspect on the server holding the
// key (the pool's, or the master of its slot), plus replica acknowledgement (MutexOptions::replica_ack).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/lock_target.hpp"
#include "lockbridge/options.hpp"
#include "redis/client_state.hpp"

namespace lockbridge::detail {

class SingleKeyTarget final : public LockTarget {
 public:
  // Throws Error{bad_option} for a key that cannot be locked on this Client's topology.
  SingleKeyTarget(std::shared_ptr<ClientState> state, std::string key, const MutexOptions& options);

  std::string describe(std::string_view operation) const override;
  const std::string& key() const noexcept override { return key_; }
  std::string identity() const override;
  std::optional<ReleaseChannel> channel() const override { return channel_; }
  bool queues_waiters() const noexcept override { return strategy_->queues_waiters(); }
  TargetAttempt attempt(const AttemptRequest& request) override;
  ReleaseOutcome release(const std::string& value) override;
  TargetExtension extend(const std::string& value, std::chrono::milliseconds lease) override;
  LockInfo inspect(std::string_view mine) override;
  void leave_queue(std::string_view waiter) noexcept override;
  std::shared_ptr<const LockStrategy> renewer() const noexcept override { return strategy_; }
  std::optional<int> replicas_acknowledged() const noexcept override { return replicas_acknowledged_; }

 private:
  // Runs `operation` on a connection to the key's server; its errors name the key (naming_key).
  template <class Operation>
  void on_connection(std::string_view name, Operation&& operation,
                     Clock::time_point deadline = Clock::time_point::max());
  // replica_ack: WAIT on the connection that wrote `value` (WAIT counts that connection's writes).
  // false on a shortfall in release mode, after the lock was deleted again on the same
  // connection; in accept mode a shortfall is only recorded.
  bool replicas_acknowledge(Connection& connection, const std::string& value);
  Error replica_shortfall(std::string_view operation) const;
  void abandon_unknown_attempt() noexcept;

  const std::shared_ptr<ClientState> state_;
  const std::string key_;
  const ReplicaAckOptions replica_ack_;
  const std::shared_ptr<LockStrategy> strategy_;  // shared with the leases, which the renewal thread keeps
  const ReleaseChannel channel_;
  std::optional<int> replicas_acknowledged_;
};

}  // namespace lockbridge::detail
