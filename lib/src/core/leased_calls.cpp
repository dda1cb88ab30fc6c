#include "core/leased_calls.hpp"

#include <algorithm>
#include <array>
#include <exception>
#include <iterator>
#include <set>
#include <span>
#include <vector>

#include "core/key_script.hpp"
#include "core/lock_target.hpp"
#include "lockbridge/identity.hpp"
#include "lockbridge/semaphore.hpp"
#include "observe/counter_events.hpp"
#include "strategies/scripts.hpp"
#include "strategies/strategy.hpp"
#include "util/hex.hpp"
#include "util/option_limits.hpp"
#include "util/random_source.hpp"
#include "waiting/announced_wait.hpp"

namespace lockbridge::detail::leased_calls {

namespace {

// Redisson's score for a permit without a lease (nonExpirableTimeout).
constexpr char kNoLeaseScore[] = "922337203685477";

std::string now_ms() { return std::to_string(wall_clock_ms()); }

// The lease's end as a score: the client's epoch milliseconds, as Java's System.currentTimeMillis().
std::string lease_end(std::chrono::milliseconds lease) {
  if (lease == LeasedSemaphore::kNoLease) return kNoLeaseScore;
  require_within("lease", lease, std::chrono::milliseconds(1));
  return std::to_string(wall_clock_ms() + lease.count());
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The id as it is kept in Redis. Throws Error{bad_option} for an id that is not 32 hex digits.
std::string stored(const std::string& permit, PermitIds ids) {
  if (permit.size() != 32) {
    throw Error(Errc::bad_option, "LeasedSemaphore: a permit id is 32 hex digits, not '" + permit + "'");
  }
  std::string bytes;
  for (std::size_t i = 0; i < permit.size(); i += 2) {
    const int high = hex_digit(permit[i]);
    const int low = hex_digit(permit[i + 1]);
    if (high < 0 || low < 0) throw Error(Errc::bad_option, "LeasedSemaphore: a permit id is 32 hex digits");
    bytes.push_back(static_cast<char>(high * 16 + low));
  }
  if (ids == PermitIds::raw) return bytes;
  return lowercase_hex(std::span(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()));
}

// One script on the permits, their leases and the channel; no wait for a route past `deadline` (a
// waiter's). `sent`: as call_on_key's.
Task<ReplyPtr> run(Routes& routes, const AnnouncedKey& semaphore, const Script& script, std::vector<std::string> args,
                   std::string_view operation, Routes::Clock::time_point deadline = Routes::Clock::time_point::max(),
                   bool* sent = nullptr) {
  const ScriptCall call{
      &script, {semaphore.key, LeasedSemaphore::leases_name(semaphore.key), semaphore.channel.name}, std::move(args)};
  co_return co_await call_on_key(routes, semaphore.state().scripts, call, operation, deadline, sent);
}

Task<std::int64_t> run_for_integer(Routes& routes, const AnnouncedKey& semaphore, const Script& script,
                                   std::vector<std::string> args, std::string_view operation) {
  const ReplyPtr reply = co_await run(routes, semaphore, script, std::move(args), operation);
  co_return integer_of(*reply, operation, semaphore.key);
}

// The release script: whether the permit was held within its lease.
Task<bool> give_back(Routes& routes, const AnnouncedKey& semaphore, std::string stored_id) {
  std::vector<std::string> args{std::move(stored_id), now_ms(), semaphore.publish_command()};
  co_return co_await run_for_integer(routes, semaphore, kLeasedRelease, std::move(args), "release") == 1;
}

// The release script for a list, all or none: how many were given back (0: none).
Task<std::int64_t> give_back_all(Routes& routes, const AnnouncedKey& semaphore, std::vector<std::string> stored_ids) {
  std::vector<std::string> args{now_ms(), semaphore.publish_command()};
  args.insert(args.end(), std::make_move_iterator(stored_ids.begin()), std::make_move_iterator(stored_ids.end()));
  co_return co_await run_for_integer(routes, semaphore, kLeasedReleaseMany, std::move(args), "release");
}

// After a lost acquire reply: gives the ids back if the attempt took permits under them (all of
// them or none: one script). Never throws (best effort: a permit with a lease comes back at its
// end anyway), and reports nothing: the ids most likely never held a permit.
Task<void> release_quietly(Routes& routes, const AnnouncedKey& semaphore, std::vector<std::string> stored_ids) {
  try {
    if (stored_ids.size() == 1) {
      (void)co_await give_back(routes, semaphore, std::move(stored_ids.front()));
    } else {
      (void)co_await give_back_all(routes, semaphore, std::move(stored_ids));
    }
  } catch (...) {
  }
}

// One acquire attempt of `permits` under new ids: done with `taken` set to their ids, or when to
// try again.
Task<TryOutcome> attempt(Routes& routes, const AnnouncedKey& semaphore, PermitIds ids, std::int64_t permits,
                         std::chrono::milliseconds lease, Routes::Clock::time_point deadline,
                         std::vector<std::string>& taken) {
  std::vector<std::string> hex_ids;
  std::vector<std::string> stored_ids;
  for (std::int64_t i = 0; i < permits; ++i) {
    std::array<unsigned char, 16> id{};
    fill_random(id);
    hex_ids.push_back(lowercase_hex(id));
    stored_ids.push_back(stored(hex_ids.back(), ids));
  }
  const std::string now = now_ms();
  std::vector<std::string> args{std::to_string(permits), lease_end(lease), now, kNoLeaseScore,
                                semaphore.publish_command()};
  args.insert(args.end(), stored_ids.begin(), stored_ids.end());
  ReplyPtr reply;
  std::exception_ptr lost;
  bool sent = false;
  try {
    reply = co_await run(routes, semaphore, kLeasedAcquire, std::move(args), "acquire", deadline, &sent);
  } catch (const Error& error) {
    // The reply was lost, perhaps after the permits were taken under these ids: give them back
    // (a permit without a lease would otherwise be gone for good), as Java releases its ids then.
    // Not when the script never left (no connection before the deadline): the give-back would
    // wait for the same busy pool, past the caller's deadline, for nothing.
    if (!may_have_written(error, sent)) throw;
    lost = std::current_exception();
  }
  if (lost) {
    co_await release_quietly(routes, semaphore, std::move(stored_ids));
    std::rethrow_exception(lost);
  }
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 1) {
    unexpected_reply(*reply, "an array", ReplyContext("acquire", semaphore.key));
  }
  if (integer_of(*reply->element[0], "acquire", semaphore.key) == 1) {
    taken = std::move(hex_ids);
    co_return TryOutcome::finished(true);
  }
  TryOutcome outcome;
  if (reply->elements == 2) {
    // The first lease to end, by the clients' clocks: try again then, as Java sleeps until then.
    const std::int64_t ends = integer_of(*reply->element[1], "acquire", semaphore.key);
    if (ends >= 0) outcome.retry_in = std::chrono::milliseconds(std::max<std::int64_t>(1, ends - std::stoll(now) + 1));
  }
  co_return outcome;
}

}  // namespace

AnnouncedKey announced(const Client& client, std::string key, const LeasedSemaphoreOptions& options,
                       std::string_view front) {
  options.validate();
  std::string channel = Semaphore::channel_name(key);
  return announced_key(client, std::move(key), std::move(channel), front, options.sharded_subscription);
}

void require_lease(std::chrono::milliseconds lease) { (void)lease_end(lease); }

Task<bool> try_set_permits(Routes& routes, const AnnouncedKey& semaphore, std::int64_t permits) {
  require_java_int("LeasedSemaphore::try_set_permits: permits", permits, 0);
  std::vector<std::string> args{std::to_string(permits), semaphore.publish_command()};
  co_return co_await run_for_integer(routes, semaphore, kLeasedTrySet, std::move(args), "set the permits of") == 1;
}

Task<std::int64_t> add_permits(Routes& routes, const AnnouncedKey& semaphore, std::int64_t permits) {
  require_java_int("LeasedSemaphore::add_permits: permits", permits, -kJavaIntMax);
  std::vector<std::string> args{std::to_string(permits), semaphore.publish_command()};
  co_return co_await run_for_integer(routes, semaphore, kLeasedAdd, std::move(args), "add permits to");
}

Task<std::int64_t> available(Routes& routes, const AnnouncedKey& semaphore) {
  std::vector<std::string> args{now_ms(), semaphore.publish_command()};
  co_return co_await run_for_integer(routes, semaphore, kLeasedAvailable, std::move(args), "read the permits of");
}

void require_permits(std::int64_t permits) {
  if (permits < 1 || permits > LeasedSemaphore::kMostPermitsAtOnce) {
    throw Error(Errc::bad_option, "LeasedSemaphore: permits at once must be 1 to " +
                                      std::to_string(LeasedSemaphore::kMostPermitsAtOnce) + ", not " + std::to_string(permits));
  }
}

Task<std::vector<std::string>> acquire(Routes& routes, const AnnouncedKey& semaphore, PermitIds ids,
                                       std::int64_t permits, std::chrono::milliseconds lease,
                                       std::shared_ptr<EventLoop> loop, std::chrono::steady_clock::time_point deadline,
                                       std::stop_token stop, std::chrono::milliseconds recheck) {
  require_permits(permits);
  require_lease(lease);
  const auto began = CounterEvents::Clock::now();
  std::vector<std::string> taken;
  int attempts = 0;
  const TryStep step = [&]() -> Task<TryOutcome> {
    ++attempts;
    co_return co_await attempt(routes, semaphore, ids, permits, lease, deadline, taken);
  };
  const CounterEvents events(semaphore.state(), semaphore.key, "leased_semaphore");
  Task<bool> waiting =
      wait_announced(semaphore.state(), semaphore.channel, std::move(loop), deadline, stop, recheck, step);
  (void)co_await report_wait(std::move(waiting), events, began, permits, attempts, stop);
  co_return taken;
}

Task<bool> release(Routes& routes, const AnnouncedKey& semaphore, PermitIds ids, std::string permit) {
  std::string stored_id = stored(permit, ids);  // a malformed id is refused before anything is reported
  const CounterEvents events(semaphore.state(), semaphore.key, "leased_semaphore");
  bool held = false;
  try {
    held = co_await give_back(routes, semaphore, std::move(stored_id));
  } catch (...) {
    events.released(1, current_error_code());
    throw;
  }
  // Not held under its lease any more (ended, or an unknown id): told as a lock's lost release is.
  events.released(1, held ? std::error_code() : make_error_code(Errc::lease_lost));
  co_return held;
}

Task<std::int64_t> release(Routes& routes, const AnnouncedKey& semaphore, PermitIds ids,
                           std::vector<std::string> permits) {
  // Malformed, repeated or too many ids are refused before anything is sent or reported.
  const auto count = static_cast<std::int64_t>(permits.size());
  require_permits(count);
  std::vector<std::string> stored_ids;
  for (const std::string& permit : permits) stored_ids.push_back(stored(permit, ids));
  if (std::set<std::string>(stored_ids.begin(), stored_ids.end()).size() != stored_ids.size()) {
    throw Error(Errc::bad_option, "LeasedSemaphore: a permit id is given twice");
  }
  const CounterEvents events(semaphore.state(), semaphore.key, "leased_semaphore");
  std::int64_t given_back = 0;
  try {
    given_back = co_await give_back_all(routes, semaphore, std::move(stored_ids));
  } catch (...) {
    events.released(count, current_error_code());
    throw;
  }
  events.released(count, given_back == count ? std::error_code() : make_error_code(Errc::lease_lost));
  co_return given_back;
}

Task<bool> update_lease(Routes& routes, const AnnouncedKey& semaphore, PermitIds ids, std::string permit,
                        std::chrono::milliseconds lease) {
  std::vector<std::string> args{stored(permit, ids), lease_end(lease), now_ms(), semaphore.publish_command()};
  co_return co_await run_for_integer(routes, semaphore, kLeasedRenew, std::move(args), "renew") == 1;
}

}  // namespace lockbridge::detail::leased_calls
