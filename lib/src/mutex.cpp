#include "lockbridge/mutex.hpp"

#include <algorithm>
#include <optional>
#include <utility>

#include "client_state.hpp"
#include "cluster/key_slot.hpp"
#include "companion_keys.hpp"
#include "lease/lease.hpp"
#include "option_limits.hpp"
#include "random.hpp"
#include "redlock/quorum.hpp"
#include "strategy.hpp"
#include "waiting/local_line.hpp"
#include "waiting/release_listener.hpp"
#include "waiting/retry_schedule.hpp"

namespace lockbridge {

namespace detail {

namespace {
using Clock = std::chrono::steady_clock;

// The same server and key, whichever Client or URL spelling reached it: the local line's name.
// (Sentinel and Redlock Clients are named by their node lists and master name.)
std::string lock_identity(const RedisUrl& url, std::string_view key) {
  std::string identity = url.topology != RedisUrl::Topology::single     ? url.redacted()
                         : url.transport == RedisUrl::Transport::unix_socket ? "unix:" + url.socket_path
                                                                             : url.host + ":" + std::to_string(url.port);
  identity.append("/").append(std::to_string(url.db)).push_back('\0');
  return identity.append(key);
}
}  // namespace

// The owner's side of one lock: the current acquisition (a Lease, shared with the Client's
// LeaseKeeper), the reentrant hold count, and the waiting loop that sits above every strategy.
class MutexCore {
 public:
  MutexCore(Client client, std::string key, MutexOptions options)
      : state_(client.state()),
        key_(std::move(key)),
        options_(std::move(options)),
        strategy_(make_strategy(options_, state_->scripts, state_->cluster != nullptr)),
        release_channel_(strategy_->release_channel_of(key_)),
        line_(options_.local_queue ? LocalLine::for_lock(lock_identity(state_->url, key_)) : nullptr),
        quorum_(state_->redlock() ? std::make_unique<Quorum>(state_->masters, state_->scripts) : nullptr) {
    // A key with a brace but no hash tag ("x}y"; for redisson also "x{y") has no companion name in
    // its own slot: on Redis Cluster its release announcement (and fence counter, fair queue)
    // would be refused after the release script had already deleted the key. (The faithful preset
    // announces nothing.)
    if (state_->cluster && !options_.faithful() && release_channel_.sharded && key_slot(release_channel_.name) != key_slot(key_)) {
      throw Error(Errc::bad_option, describe("lock", key_) + ": on Redis Cluster a key containing a brace needs a "
                                    "hash tag (e.g. '{orders}' in front of it) so that its companion keys share its slot");
    }
  }

  // Whether this Mutex holds the lock: acquired, not released, and not known lost. A lease lost
  // behind our back ends the hold here too, so the Mutex can lock again.
  bool holds() {
    if (hold_count_ == 0) return false;
    if (lease_->snapshot().held) return true;
    end_hold();
    return false;
  }
  bool holds() const { return hold_count_ > 0 && lease_->snapshot().held; }

  // lock() on a Mutex that holds the lock: counted when reentrant, otherwise a bug in the caller,
  // refused before any waiting or I/O. false when it does not hold it.
  bool hold_again() {
    if (!holds()) return false;
    if (!options_.reentrant) throw Error(Errc::bad_option, describe("lock", key_) + ": this Mutex already holds it");
    ++hold_count_;
    return true;
  }

  // One attempt (after hold_again()).
  AcquireAttempt attempt(const AttemptRequest& request) {
    if (quorum_) return attempt_on_quorum(request);
    const auto started = Clock::now();
    AcquireAttempt result;
    std::optional<Error> lost_reply;
    try {
      on_connection("acquire", [&](Connection& connection) {
        result = strategy_->try_acquire(connection, key_, request);
        if (result.acquired && !replicas_acknowledge(connection, result.value, "acquire")) throw replica_shortfall("acquire");
      });
    } catch (const Error& error) {
      // The request may have reached the server even though its reply did not reach us.
      if (error.errc() != Errc::timeout && error.errc() != Errc::io && error.errc() != Errc::protocol) throw;
      lost_reply = error;
    }  // the broken connection went back (and was dropped) before we borrow a fresh one
    if (lost_reply) {
      abandon_unknown_attempt();
      throw *lost_reply;
    }
    if (result.acquired) begin_hold(result, started);
    return result;
  }

  bool try_once() { return hold_again() || attempt(AttemptRequest{options_.lease, false, {}}).acquired; }

  // Waits in the local line, then attempts until acquired or the retry policy gives up. Between
  // attempts it sleeps until the policy's next attempt is due, unless a release is heard first:
  // from a holder in this process (through the line) or, in notify and fair mode, announced by
  // Redis. A fair waiter also attempts at least three times per fair_waiter_timeout, each attempt
  // keeping its place in the queue alive.
  bool acquire_until(Clock::time_point deadline) {
    if (hold_again()) return true;
    std::optional<LocalLine::Place> place;
    if (line_) {
      place.emplace(line_);
      if (!place->wait_for_turn(deadline)) return false;
    }
    RetrySchedule schedule(options_.retry, Clock::now(), deadline);
    const bool fair = options_.wait_mode == WaitMode::fair;
    // Redlock's masters announce nothing: its waiters poll.
    const bool notify = options_.wait_mode != WaitMode::poll && !quorum_;
    const QueueSeat seat(*this, fair ? random_token() : std::string());
    ReleaseListener listener(*state_, release_channel_);
    if (notify) listener.listen_if_subscribed();  // from before the first attempt, at no cost
    AttemptRequest request{options_.lease, false, seat.waiter};  // first: the uncontended fast path
    std::optional<Clock::time_point> due;  // the policy's next attempt
    bool heartbeat = false;                // this attempt came early, only to keep a fair seat
    for (;;) {
      if (place) place->wait_while_held_here(deadline);
      listener.arm();
      const AcquireAttempt result = attempt(request);
      if (result.acquired) return true;
      listener.drop_if_redirected();
      const bool asked_remaining = std::exchange(request.learn_remaining, true);
      if (!fair && !asked_remaining && !result.holder_remaining && options_.retry.kind == RetryPolicy::Kind::backoff) {
        // The fast first attempt did not learn when the holder's lease ends, and the backoff must
        // never sleep past it: try again at once, learning it (subscribed first, in notify mode).
        if (notify && !listener.listening()) listener.listen(deadline);
        continue;
      }
      if (!heartbeat) due = schedule.next(Clock::now(), result.holder_remaining);
      if (!due) return false;
      if (fair && listener.listening() && options_.retry.kind == RetryPolicy::Kind::backoff) {
        // A fair release is announced to the waiter whose turn it is, by name: backing off sooner
        // only spends round trips. Wait for the message, or for the holder's lease to end (a
        // holder that died announces nothing); the heartbeat below keeps the seat alive.
        const auto lease_end = result.holder_remaining ? Clock::now() + *result.holder_remaining : Clock::time_point::max();
        due = std::max(*due, std::min(deadline, lease_end));
      }
      // A release between the failed attempt and the subscription went unheard: once the server
      // confirms the subscription, bring the due attempt forward.
      if (notify && !listener.listening() && listener.listen(*due)) continue;
      const auto wake_by = fair ? std::min(*due, Clock::now() + options_.fair_waiter_timeout / 3) : *due;
      const bool heard = listener.wait_until(wake_by, seat.waiter);
      heartbeat = fair && !heard && Clock::now() < *due;
    }
  }

  // `all`: every reentrant hold at once (the Mutex is going away).
  void release(bool all = false) noexcept {
    if (all && hold_count_ > 1) hold_count_ = 1;
    if (hold_count_ == 0 || --hold_count_ > 0) return;  // reentrant: an inner unlock
    state_->keeper.forget(*lease_);
    try {
      const Lease::IoClaim io = lease_->claim_io();  // a renewal in flight finishes first; then none starts
      const std::string value = lease_->snapshot().value;
      lease_->released();
      if (released_value(value)) {
        last_error_.clear();
      } else {
        report(Error(Errc::lease_lost,
                     describe("release", key_) + ": the key no longer held our value; nothing was deleted"));
      }
    } catch (const Error& error) {
      report(error);
    } catch (const std::exception& error) {
      report(Error(Errc::io, describe("release", key_) + ": " + error.what()));
    }
    if (line_) line_->released_here(line_hold_);
  }

  // The hold passes to another Mutex of the same identity: end it here, leaving the key alone.
  void abandon() noexcept {
    if (hold_count_ == 0) return;
    try {
      const Lease::IoClaim io = lease_->claim_io();  // a renewal in flight finishes first
      lease_->released();
    } catch (...) {  // the claim cannot fail short of a broken std::mutex; the hold ends regardless
    }
    end_hold();
  }

  bool extend(std::chrono::milliseconds lease) {
    if (!holds()) throw Error(Errc::bad_option, describe("extend", key_) + ": this Mutex does not hold it");
    const auto started = Clock::now();
    std::optional<std::string> value;
    bool acknowledged = true;
    {
      const Lease::IoClaim io = lease_->claim_io();
      if (quorum_) {
        const std::string held = lease_->snapshot().value;
        if (quorum_->extend(key_, held, lease).held) value = held;
        if (value) lease_->renewed(*value, started + lease - Quorum::drift(lease));
      } else {
        on_connection("extend", [&](Connection& connection) {
          value = strategy_->extend(connection, key_, lease_->snapshot().value, lease);
          if (value) lease_->renewed(*value, started + lease);
          if (value) acknowledged = replicas_acknowledge(connection, *value, "extend");
        });
      }
    }
    if (!acknowledged) {  // released on the shortfall: the hold is over, and the caller is told
      const Error shortfall = replica_shortfall("extend");
      lease_->lost(shortfall);
      end_hold();
      throw shortfall;
    }
    if (!value) {
      last_error_ = make_error_code(Errc::lease_lost);
      lease_->lost(Error(Errc::lease_lost, describe("extend", key_) +
                                               (quorum_ ? ": fewer than a majority of masters extended it in time (our "
                                                          "copies were deleted)"
                                                        : ": the key no longer holds our value")));
      end_hold();
      return false;
    }
    last_error_.clear();
    if (line_) line_->extended_here(line_hold_, started + lease);
    return true;
  }

  LockInfo inspect() const {
    const std::string mine = holds() ? lease_->snapshot().value : std::string();
    if (quorum_) return quorum_->inspect(key_, mine);
    LockInfo info;
    on_connection("inspect", [&](Connection& connection) { info = strategy_->inspect(connection, key_, mine); });
    return info;
  }

  std::chrono::milliseconds valid_for() const noexcept {
    if (hold_count_ == 0) return std::chrono::milliseconds::zero();
    const Lease::Snapshot lease = lease_->snapshot();
    if (!lease.held) return std::chrono::milliseconds::zero();
    const auto left = lease.valid_until - Clock::now();
    return std::max(std::chrono::milliseconds::zero(), std::chrono::floor<std::chrono::milliseconds>(left));
  }

  std::shared_ptr<ClientState> state_;
  std::string key_;
  MutexOptions options_;
  std::shared_ptr<LockStrategy> strategy_;  // shared with the leases, which the renewal thread keeps
  const ReleaseChannel release_channel_;
  const std::shared_ptr<LocalLine> line_;  // null without local_queue
  std::uint64_t line_hold_ = 0;            // this Mutex's hold in line_ (LocalLine::held_here)
  std::shared_ptr<Lease> lease_;           // the current or last acquisition; null before the first
  int hold_count_ = 0;                     // > 0 while held; above 1 only when reentrant
  std::optional<int> replicas_acknowledged_;  // WAIT's last answer (replica_ack)
  const std::unique_ptr<Quorum> quorum_;      // redlock:// Clients: the masters' majority; null otherwise
  std::error_code last_error_;
  std::function<void(const Error&)> on_release_error_;
  std::function<void(const Error&)> on_lease_lost_;

 private:
  // Runs `operation` on a connection for the key; its errors name the key (naming_key).
  template <class Operation>
  void on_connection(std::string_view name, Operation&& operation) const {
    try {
      state_->with_connection(key_, std::forward<Operation>(operation));
    } catch (const Error& error) {
      throw naming_key(error, name, key_);
    }
  }

  // A fair waiter's id and its place in the Redis queue, left when the wait ends without the lock
  // (an acquisition takes it out of the queue itself).
  struct QueueSeat {
    QueueSeat(MutexCore& owner, std::string id) : core(owner), waiter(std::move(id)) {}
    ~QueueSeat() {
      if (waiter.empty() || core.hold_count_ > 0) return;
      try {
        core.state_->with_connection(core.key_, [&](Connection& connection) {
          core.strategy_->leave_queue(connection, core.key_, waiter);
        });
      } catch (...) {  // best effort: the queue skips us after fair_waiter_timeout anyway
      }
    }
    QueueSeat(const QueueSeat&) = delete;
    QueueSeat& operator=(const QueueSeat&) = delete;
    MutexCore& core;
    const std::string waiter;
  };

  // MutexOptions::replica_ack: WAIT on the connection that wrote `value` (WAIT counts that
  // connection's writes). false on a shortfall in release mode, after the lock was deleted again
  // on the same connection; in accept mode a shortfall is only recorded.
  bool replicas_acknowledge(Connection& connection, const std::string& value, std::string_view operation) {
    const ReplicaAckOptions& ack = options_.replica_ack;
    if (ack.replicas <= 0) return true;
    const ReplyPtr reply =
        connection.run_held({"WAIT", std::to_string(ack.replicas), std::to_string(ack.timeout.count())}, ack.timeout);
    replicas_acknowledged_ = static_cast<int>(expect_integer(*reply, describe(operation, key_)));
    if (*replicas_acknowledged_ >= ack.replicas || ack.on_shortfall == ReplicaAckOptions::OnShortfall::accept) return true;
    (void)strategy_->release(connection, key_, value, release_channel_.name);
    return false;
  }

  Error replica_shortfall(std::string_view operation) const {
    return Error(Errc::no_quorum, describe(operation, key_) + ": " + std::to_string(replicas_acknowledged_.value_or(0)) +
                                      " of " + std::to_string(options_.replica_ack.replicas) + " replicas acknowledged within " +
                                      std::to_string(options_.replica_ack.timeout.count()) +
                                      " ms; the lock was released (MutexOptions::replica_ack)");
  }

  // Redlock: one attempt on every master at once. A lost reply is no concern here: the quorum
  // deletes our value everywhere when it did not reach a majority.
  AcquireAttempt attempt_on_quorum(const AttemptRequest& request) {
    const auto started = Clock::now();
    AcquireAttempt result;
    result.value = options_.token.fixed_value.empty() ? random_token() : options_.token.fixed_value;
    const Quorum::Outcome outcome = quorum_->acquire(key_, result.value, request.lease, request.learn_remaining);
    result.acquired = outcome.held;
    result.holder_remaining = outcome.holder_remaining;
    // Valid until the lease ends on the master that set it first, less the drift Redlock allows.
    if (result.acquired) begin_hold(result, started, started + request.lease - Quorum::drift(request.lease));
    return result;
  }

  // Deletes `value` where it is still ours; false when no copy was (the lease was lost).
  bool released_value(const std::string& value) {
    if (quorum_) return quorum_->release(key_, value) > 0;
    ReleaseOutcome outcome = ReleaseOutcome::not_ours;
    on_connection("release", [&](Connection& connection) {
      outcome = strategy_->release(connection, key_, value, release_channel_.name);
    });
    return outcome == ReleaseOutcome::released;
  }

  void begin_hold(const AcquireAttempt& result, Clock::time_point started) {
    // Counted from before the request left: the server's lease can only end later than this.
    begin_hold(result, started, started + options_.lease);
  }

  void begin_hold(const AcquireAttempt& result, Clock::time_point started, Clock::time_point valid_until) {
    std::optional<Lease::Renewal> renewal;
    if (options_.watchdog.enabled) renewal = Lease::Renewal{options_.lease, started + options_.watchdog.max_hold};
    if (line_) line_hold_ = line_->held_here(valid_until);
    // A loss the renewal thread finds also ends the hold in the local line, so a thread of this
    // process waiting there contends now rather than at the end of the lease it was told of.
    auto on_lost = [line = line_, hold = line_hold_, handler = on_lease_lost_](const Error& why) {
      if (line) line->released_here(hold);
      if (handler) handler(why);
    };
    lease_ = std::make_shared<Lease>(strategy_, key_, result.value, valid_until, result.fence, renewal, std::move(on_lost));
    hold_count_ = 1;
    state_->keeper.keep(lease_);
  }

  // The hold is over without a release of ours (the lease was lost).
  void end_hold() noexcept {
    hold_count_ = 0;
    state_->keeper.forget(*lease_);
    if (line_) line_->released_here(line_hold_);
  }

  void abandon_unknown_attempt() noexcept {
    try {
      state_->with_connection(key_, [&](Connection& connection) { strategy_->abandon_attempt(connection, key_); });
    } catch (...) {  // best effort: the server is probably unreachable
    }
  }

  void report(const Error& error) noexcept {
    last_error_ = error.code();
    if (!on_release_error_) return;
    try {
      on_release_error_(error);
    } catch (...) {  // a throwing handler must not turn unlock() into std::terminate
    }
  }
};

}  // namespace detail

// ---- Mutex -----------------------------------------------------------------------------------

namespace {
std::string checked_key(std::string key) {
  if (key.empty()) throw Error(Errc::bad_option, "lock key must not be empty");
  return key;
}
}  // namespace

Mutex::Mutex(Client client, std::string key, MutexOptions options) {
  options.validate();
  if (client.state()->redlock()) detail::require_redlock_options(options);
  core_ = std::make_unique<detail::MutexCore>(std::move(client), checked_key(std::move(key)), std::move(options));
}

Mutex::~Mutex() {
  if (core_) core_->release(/*all=*/true);
}

Mutex::Mutex(Mutex&&) noexcept = default;

Mutex& Mutex::operator=(Mutex&& other) noexcept {
  if (this != &other) {
    if (core_) core_->release(/*all=*/true);
    core_ = std::move(other.core_);
  }
  return *this;
}

void Mutex::lock() {
  if (!core_->acquire_until(std::chrono::steady_clock::now() + core_->options_.acquire_timeout)) {
    throw Error(Errc::timeout, detail::describe("lock", core_->key_) + ": still held by another owner after " +
                                   std::to_string(core_->options_.acquire_timeout.count()) + " ms");
  }
}

bool Mutex::try_lock() { return core_->try_once(); }

bool Mutex::try_lock_until_steady(std::chrono::steady_clock::time_point deadline) {
  return core_->acquire_until(deadline);
}

void Mutex::unlock() noexcept {
  if (core_) core_->release();
}

void Mutex::abandon() noexcept {
  if (core_) core_->abandon();
}

bool Mutex::extend(std::chrono::milliseconds lease) {
  detail::require_within("extend: lease", lease, std::chrono::milliseconds(1));
  return core_->extend(lease);
}

bool Mutex::owns_lock() const noexcept { return core_ && std::as_const(*core_).holds(); }
std::chrono::milliseconds Mutex::valid_for() const noexcept {
  return core_ ? core_->valid_for() : std::chrono::milliseconds::zero();
}
std::string Mutex::value() const { return core_->lease_ ? core_->lease_->snapshot().value : std::string(); }
std::optional<int> Mutex::replicas_acknowledged() const noexcept {
  return core_ ? core_->replicas_acknowledged_ : std::nullopt;
}
std::optional<std::uint64_t> Mutex::fence() const noexcept { return core_ && core_->lease_ ? core_->lease_->fence : std::nullopt; }
void Mutex::on_lease_lost(std::function<void(const Error&)> handler) { core_->on_lease_lost_ = std::move(handler); }
std::stop_token Mutex::lease_token() const noexcept {
  return core_ && core_->lease_ ? core_->lease_->stop_token() : std::stop_token();
}
LockInfo Mutex::inspect() const { return core_->inspect(); }
const std::string& Mutex::key() const noexcept { return core_->key_; }
const MutexOptions& Mutex::options() const noexcept { return core_->options_; }
std::error_code Mutex::last_error() const noexcept { return core_->last_error_; }
void Mutex::on_release_error(std::function<void(const Error&)> handler) { core_->on_release_error_ = std::move(handler); }

}  // namespace lockbridge
