#include "core/single_key_target.hpp"

#include <utility>

#include "cluster/key_slot.hpp"

namespace lockbridge::detail {

SingleKeyTarget::SingleKeyTarget(std::shared_ptr<ClientState> state, std::string key, const MutexOptions& options)
    : state_(std::move(state)),
      key_(std::move(key)),
      replica_ack_(options.replica_ack),
      strategy_(make_strategy(options, state_->scripts, state_->cluster != nullptr)),
      channel_(strategy_->release_channel_of(key_)) {
  // A key with a brace but no hash tag ("x}y"; for redisson also "x{y") has no companion name in
  // its own slot: on Redis Cluster its release announcement (and fence counter, fair queue)
  // would be refused after the release script had already deleted the key. (The faithful preset
  // announces nothing.)
  if (state_->cluster && !options.faithful() && channel_.sharded && key_slot(channel_.name) != key_slot(key_)) {
    throw Error(Errc::bad_option, describe("lock") +
                                      ": on Redis Cluster a key containing a brace needs a hash tag "
                                      "(e.g. '{orders}' in front of it) so that its companion keys share its slot");
  }
}

std::string SingleKeyTarget::describe(std::string_view operation) const { return detail::describe(operation, key_); }

std::string SingleKeyTarget::identity() const { return lock_identity(state_->url, std::span(&key_, 1)); }

template <class Operation>
void SingleKeyTarget::on_connection(std::string_view name, Operation&& operation, Clock::time_point deadline) {
  try {
    state_->with_connection(key_, std::forward<Operation>(operation), deadline);
  } catch (const Error& error) {
    throw naming_key(error, name, key_);
  }
}

TargetAttempt SingleKeyTarget::attempt(const AttemptRequest& request) {
  const auto started = Clock::now();
  AcquireAttempt result;
  bool sent = false;
  try {
    on_connection(
        "acquire",
        [&](Connection& connection) {
          sent = true;
          BlockingLink link(connection);
          result = strategy_->try_acquire(link, key_, request).run_now();
          if (result.acquired && !replicas_acknowledge(connection, result.value)) throw replica_shortfall("acquire");
        },
        request.deadline);
  } catch (const Error& error) {
    // The request may have reached the server even though its reply did not reach us. The broken
    // connection went back (and was dropped) before the undo borrows a fresh one.
    if (may_have_written(error, sent)) abandon_unknown_attempt();
    throw;
  }
  TargetAttempt attempt;
  attempt.acquired = result.acquired;
  attempt.value = std::move(result.value);
  // Counted from before the request left: the server's lease can only end later than this.
  attempt.valid_until = started + request.lease;
  attempt.fence = result.fence;
  attempt.holder_remaining = result.holder_remaining;
  return attempt;
}

ReleaseOutcome SingleKeyTarget::release(const std::string& value) {
  ReleaseOutcome outcome = ReleaseOutcome::not_ours;
  on_connection("release", [&](Connection& connection) {
    BlockingLink link(connection);
    outcome = strategy_->release(link, key_, value, channel_.name).run_now();
  });
  return outcome;
}

TargetExtension SingleKeyTarget::extend(const std::string& value, std::chrono::milliseconds lease) {
  const auto started = Clock::now();
  TargetExtension extension;
  on_connection("extend", [&](Connection& connection) {
    BlockingLink link(connection);
    const std::optional<std::string> held = strategy_->extend(link, key_, value, lease).run_now();
    if (!held) {
      extension.why = "the key no longer holds our value";
      return;
    }
    extension.value = *held;
    extension.valid_until = started + lease;
    extension.kind =
        replicas_acknowledge(connection, *held) ? TargetExtension::Kind::extended : TargetExtension::Kind::released;
  });
  if (extension.kind == TargetExtension::Kind::released) extension.error = replica_shortfall("extend");
  return extension;
}

LockInfo SingleKeyTarget::inspect(std::string_view mine) {
  LockInfo info;
  on_connection("inspect", [&](Connection& connection) {
    BlockingLink link(connection);
    info = strategy_->inspect(link, key_, mine).run_now();
  });
  return info;
}

void SingleKeyTarget::leave_queue(std::string_view waiter) noexcept {
  try {
    state_->with_connection(key_, [&](Connection& connection) {
      BlockingLink link(connection);
      strategy_->leave_queue(link, key_, waiter).run_now();
    });
  } catch (...) {  // best effort: the queue skips the waiter after fair_waiter_timeout anyway
  }
}

bool SingleKeyTarget::replicas_acknowledge(Connection& connection, const std::string& value) {
  if (replica_ack_.replicas <= 0) return true;
  const ReplyPtr reply =
      connection.run_held({"WAIT", std::to_string(replica_ack_.replicas), std::to_string(replica_ack_.timeout.count())},
                          replica_ack_.timeout);
  replicas_acknowledged_ = static_cast<int>(expect_integer(*reply, describe("replica WAIT for")));
  if (*replicas_acknowledged_ >= replica_ack_.replicas ||
      replica_ack_.on_shortfall == ReplicaAckOptions::OnShortfall::accept) {
    return true;
  }
  BlockingLink link(connection);
  (void)strategy_->release(link, key_, value, channel_.name).run_now();
  return false;
}

Error SingleKeyTarget::replica_shortfall(std::string_view operation) const {
  return Error(Errc::no_quorum, describe(operation) + ": " + std::to_string(replicas_acknowledged_.value_or(0)) +
                                    " of " + std::to_string(replica_ack_.replicas) + " replicas acknowledged within " +
                                    std::to_string(replica_ack_.timeout.count()) +
                                    " ms; the lock was released (MutexOptions::replica_ack)");
}

void SingleKeyTarget::abandon_unknown_attempt() noexcept {
  try {
    state_->with_connection(key_, [&](Connection& connection) {
      BlockingLink link(connection);
      strategy_->abandon_attempt(link, key_).run_now();
    });
  } catch (...) {  // best effort: the server is probably unreachable
  }
}

}  // namespace lockbridge::detail
