#include "core/single_key_target.hpp"

#include <array>
#include <utility>

#include "cluster/key_slot.hpp"

namespace lockbridge::detail {

SingleKeyTarget::SingleKeyTarget(std::shared_ptr<ClientState> state, std::string key, const MutexOptions& options,
                                 std::shared_ptr<Routes> routes)
    : SingleKeyTarget(state, std::move(key), options,
                      make_strategy(options, state->scripts, state->cluster != nullptr), std::move(routes)) {}

SingleKeyTarget::SingleKeyTarget(std::shared_ptr<ClientState> state, std::string key, const MutexOptions& options,
                                 std::shared_ptr<LockStrategy> strategy, std::shared_ptr<Routes> routes)
    : state_(std::move(state)),
      key_(std::move(key)),
      replica_ack_(options.replica_ack),
      strategy_(std::move(strategy)),
      channel_(strategy_->release_channel_of(key_)),
      routes_(routes ? std::move(routes) : std::make_shared<BlockingRoutes>(*state_)) {
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

std::string SingleKeyTarget::line_name() const { return lock_line_name(state_->url, std::span(&key_, 1)); }

Task<void> SingleKeyTarget::on_link(std::string_view name, const Routes::Operation& operation,
                                    Clock::time_point deadline) {
  try {
    co_await routes_->on_link(key_, operation, deadline);
  } catch (const Error& error) {
    throw naming_key(error, name, key_);
  }
}

Task<TargetAttempt> SingleKeyTarget::attempt(const AttemptRequest& request) {
  const auto started = Clock::now();
  AcquireAttempt result;
  bool sent = false;
  std::optional<Error> failure;
  // Named, as every operation here: a temporary in a co_await's expression is what GCC 12 gets
  // wrong (docs/design.md §15).
  const Routes::Operation acquire = [&](Link& link) -> Task<void> {
    sent = true;
    result = co_await strategy_->try_acquire(link, key_, request);
    if (result.acquired && !co_await replicas_acknowledge(link, result.value)) throw replica_shortfall("acquire");
  };
  try {
    co_await on_link("acquire", acquire, request.deadline);
  } catch (const Error& error) {
    failure = error;
  }
  if (failure) {
    // The request may have reached the server even though its reply did not reach us. The broken
    // connection went back (and was dropped) before the undo borrows a fresh one.
    if (may_have_written(*failure, sent)) co_await abandon_unknown_attempt();
    throw *failure;
  }
  TargetAttempt attempt;
  attempt.acquired = result.acquired;
  attempt.value = std::move(result.value);
  // Counted from before the request left: the server's lease can only end later than this. A
  // grant found by this attempt ran earlier: what was left of it when the server looked counts.
  attempt.valid_until = started + result.granted_remaining.value_or(request.lease);
  attempt.granted = result.granted_remaining.has_value();
  attempt.fence = result.fence;
  attempt.holder_remaining = result.holder_remaining;
  co_return attempt;
}

Task<ReleaseOutcome> SingleKeyTarget::release(const std::string& value) {
  ReleaseOutcome outcome = ReleaseOutcome::not_ours;
  const Routes::Operation release = [&](Link& link) -> Task<void> {
    outcome = co_await strategy_->release(link, key_, value, channel_.name);
  };
  co_await on_link("release", release);
  co_return outcome;
}

Task<TargetExtension> SingleKeyTarget::extend(const std::string& value, std::chrono::milliseconds lease) {
  const auto started = Clock::now();
  TargetExtension extension;
  const Routes::Operation extend = [&](Link& link) -> Task<void> {
    const std::optional<std::string> held = co_await strategy_->extend(link, key_, value, lease);
    if (!held) {
      extension.why = "the key no longer holds our value";
      co_return;
    }
    extension.value = *held;
    extension.valid_until = started + lease;
    const bool acknowledged = co_await replicas_acknowledge(link, *held);
    extension.kind = acknowledged ? TargetExtension::Kind::extended : TargetExtension::Kind::released;
  };
  co_await on_link("extend", extend);
  if (extension.kind == TargetExtension::Kind::released) extension.error = replica_shortfall("extend");
  co_return extension;
}

Task<LockInfo> SingleKeyTarget::inspect(std::string_view mine) {
  LockInfo info;
  const Routes::Operation inspect = [&](Link& link) -> Task<void> {
    info = co_await strategy_->inspect(link, key_, mine);
  };
  co_await on_link("inspect", inspect);
  co_return info;
}

Task<void> SingleKeyTarget::leave_queue(std::string_view waiter) {
  const Routes::Operation leave = [&](Link& link) -> Task<void> {
    co_await strategy_->leave_queue(link, key_, waiter);
  };
  try {
    co_await routes_->on_link(key_, leave, Clock::time_point::max());
  } catch (...) {  // best effort: the queue skips the waiter after fair_waiter_timeout anyway
  }
}

Task<bool> SingleKeyTarget::replicas_acknowledge(Link& link, const std::string& value) {
  if (replica_ack_.replicas <= 0) co_return true;
  const std::string replicas = std::to_string(replica_ack_.replicas);
  const std::string timeout = std::to_string(replica_ack_.timeout.count());
  const std::array<std::string_view, 3> wait{"WAIT", replicas, timeout};
  const ReplyPtr reply = co_await link.run_held(Args(wait), replica_ack_.timeout);
  replicas_acknowledged_ = static_cast<int>(expect_integer(*reply, describe("replica WAIT for")));
  if (*replicas_acknowledged_ >= replica_ack_.replicas ||
      replica_ack_.on_shortfall == ReplicaAckOptions::OnShortfall::accept) {
    co_return true;
  }
  (void)co_await strategy_->release(link, key_, value, channel_.name);
  co_return false;
}

Error SingleKeyTarget::replica_shortfall(std::string_view operation) const {
  return Error(Errc::no_quorum, describe(operation) + ": " + std::to_string(replicas_acknowledged_.value_or(0)) +
                                    " of " + std::to_string(replica_ack_.replicas) + " replicas acknowledged within " +
                                    std::to_string(replica_ack_.timeout.count()) +
                                    " ms; the lock was released (MutexOptions::replica_ack)");
}

Task<void> SingleKeyTarget::abandon_unknown_attempt() {
  const Routes::Operation abandon = [&](Link& link) -> Task<void> { co_await strategy_->abandon_attempt(link, key_); };
  try {
    co_await routes_->on_link(key_, abandon, Clock::time_point::max());
  } catch (...) {  // best effort: the server is probably unreachable
  }
}

}  // namespace lockbridge::detail
