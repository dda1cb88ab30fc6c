#include "core/quorum_target.hpp"

#include <utility>

#include "lockbridge/identity.hpp"
#include "redlock/pooled_rounds.hpp"

namespace lockbridge::detail {

QuorumTarget::QuorumTarget(std::shared_ptr<ClientState> state, std::string key, const MutexOptions& options,
                           std::shared_ptr<QuorumRounds> rounds)
    : state_(std::move(state)),
      key_(std::move(key)),
      fixed_value_(options.token.fixed_value),
      rounds_(rounds ? std::move(rounds) : std::make_shared<PooledRounds>(state_->masters)),
      quorum_(*rounds_, state_->scripts) {
  require_redlock_options(options);
}

std::string QuorumTarget::line_name() const { return lock_line_name(state_->url, std::span(&key_, 1)); }

Task<TargetAttempt> QuorumTarget::attempt(const AttemptRequest& request) {
  // A lost reply is no concern here: the quorum deletes our value everywhere when it did not
  // reach a majority.
  const auto started = Clock::now();
  TargetAttempt attempt;
  attempt.value = fixed_value_.empty() ? random_token() : fixed_value_;
  const Quorum::Outcome outcome =
      co_await quorum_.acquire(key_, attempt.value, request.lease, request.learn_remaining, request.deadline);
  attempt.acquired = outcome.held;
  attempt.holder_remaining = outcome.holder_remaining;
  // Valid until the lease ends on the master that set it first, less the drift Redlock allows.
  attempt.valid_until = started + request.lease - Quorum::drift(request.lease);
  co_return attempt;
}

Task<TargetExtension> QuorumTarget::extend(const std::string& value, std::chrono::milliseconds lease) {
  const auto started = Clock::now();
  TargetExtension extension;
  const Quorum::Outcome outcome = co_await quorum_.extend(key_, value, lease);
  if (!outcome.held) {
    extension.why = "fewer than a majority of masters extended it in time (our copies were deleted)";
    co_return extension;
  }
  extension.kind = TargetExtension::Kind::extended;
  extension.value = value;
  extension.valid_until = started + lease - Quorum::drift(lease);
  co_return extension;
}

}  // namespace lockbridge::detail
