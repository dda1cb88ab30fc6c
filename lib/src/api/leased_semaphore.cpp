#include "lockbridge/leased_semaphore.hpp"

#include <array>

#include "core/announced_key.hpp"
#include "core/key_script.hpp"
#include "core/lock_target.hpp"
#include "lockbridge/identity.hpp"
#include "lockbridge/semaphore.hpp"
#include "observe/counter_events.hpp"
#include "strategies/redisson.hpp"
#include "strategies/scripts.hpp"
#include "strategies/strategy.hpp"
#include "util/hex.hpp"
#include "util/option_limits.hpp"
#include "util/random_source.hpp"
#include "waiting/announced_wait.hpp"

namespace lockbridge {

namespace {

// Redisson's score for a permit without a lease (nonExpirableTimeout).
constexpr char kNoLeaseScore[] = "922337203685477";

std::string now_ms() { return std::to_string(wall_clock_ms()); }

// The lease's end as a score: the client's epoch milliseconds, as Java's System.currentTimeMillis().
std::string lease_end(std::chrono::milliseconds lease) {
  if (lease == LeasedSemaphore::kNoLease) return kNoLeaseScore;
  detail::require_within("lease", lease, std::chrono::milliseconds(1));
  return std::to_string(wall_clock_ms() + lease.count());
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

void LeasedSemaphoreOptions::validate() const {
  detail::require_within("acquire_timeout", acquire_timeout, std::chrono::milliseconds::zero());
  detail::require_within("recheck", recheck, std::chrono::milliseconds(1));
}

std::string LeasedSemaphore::leases_name(std::string_view key) {
  return detail::RedissonStrategy::suffixed(key, "timeout");
}

LeasedSemaphore::LeasedSemaphore(Client client, std::string key, LeasedSemaphoreOptions options) : options_(options) {
  options_.validate();
  std::string channel = Semaphore::channel_name(key);
  target_ = std::make_shared<const detail::AnnouncedKey>(
      detail::announced_key(client, std::move(key), std::move(channel), "LeasedSemaphore",
                                options_.sharded_subscription));
}

const std::string& LeasedSemaphore::key() const noexcept { return target_->key; }

std::string LeasedSemaphore::stored(const std::string& permit) const {
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
  if (options_.ids == PermitIds::raw) return bytes;
  return detail::lowercase_hex(std::span(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()));
}

namespace {

detail::ReplyPtr run(const detail::AnnouncedKey& target, const detail::Script& script, std::vector<std::string> args,
                     std::string_view operation) {
  const detail::ScriptCall call{
      &script, {target.key, LeasedSemaphore::leases_name(target.key), target.channel.name}, std::move(args)};
  return detail::run_on_key(target.state(), call, operation);
}

}  // namespace

bool LeasedSemaphore::try_set_permits(std::int64_t permits) {
  detail::require_java_int("LeasedSemaphore::try_set_permits: permits", permits, 0);
  const auto reply = run(*target_, detail::kLeasedTrySet, {std::to_string(permits), target_->publish_command()},
                         "set the permits of");
  return detail::integer_of(*reply, "set the permits of", target_->key) == 1;
}

std::int64_t LeasedSemaphore::add_permits(std::int64_t permits) {
  detail::require_java_int("LeasedSemaphore::add_permits: permits", permits, -detail::kJavaIntMax);
  const auto reply = run(*target_, detail::kLeasedAdd, {std::to_string(permits), target_->publish_command()},
                         "add permits to");
  return detail::integer_of(*reply, "add permits to", target_->key);
}

std::int64_t LeasedSemaphore::available() {
  const auto reply = run(*target_, detail::kLeasedAvailable, {now_ms(), target_->publish_command()},
                         "read the permits of");
  return detail::integer_of(*reply, "read the permits of", target_->key);
}

std::optional<std::string> LeasedSemaphore::try_acquire(std::chrono::milliseconds lease) {
  // A deadline already past: one attempt.
  return acquire_until_steady(std::chrono::steady_clock::time_point::min(), lease, {});
}

std::string LeasedSemaphore::acquire(std::chrono::milliseconds lease) {
  std::optional<std::string> permit =
      acquire_until_steady(std::chrono::steady_clock::now() + options_.acquire_timeout, lease, {});
  if (!permit) {
    throw Error(Errc::timeout,
                detail::describe("acquire", target_->key) + ": no permit available within acquire_timeout");
  }
  return *permit;
}

std::optional<std::string> LeasedSemaphore::acquire_until_steady(std::chrono::steady_clock::time_point deadline,
                                                                 std::chrono::milliseconds lease,
                                                                 std::stop_token stop) {
  (void)lease_end(lease);  // refuses a bad lease before any I/O
  std::optional<std::string> permit;
  const auto attempt = [&]() -> detail::TryOutcome {
    std::array<unsigned char, 16> id{};
    detail::fill_random(id);
    std::string hex = detail::lowercase_hex(id);
    const std::string now = now_ms();
    detail::ReplyPtr reply;
    try {
      reply = run(*target_, detail::kLeasedAcquire,
                  {"1", lease_end(lease), now, kNoLeaseScore, target_->publish_command(), stored(hex)}, "acquire");
    } catch (const Error& error) {
      // The reply was lost, perhaps after the permit was taken under this id: give it back (a
      // permit without a lease would otherwise be gone for good), as Java releases its ids then.
      if (detail::may_have_written(error, true)) (void)release_quietly(hex);
      throw;
    }
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 1) {
      detail::unexpected_reply(*reply, "an array", detail::ReplyContext("acquire", target_->key));
    }
    if (detail::integer_of(*reply->element[0], "acquire", target_->key) == 1) {
      permit = std::move(hex);
      return detail::TryOutcome::finished(true);
    }
    detail::TryOutcome outcome;
    if (reply->elements == 2) {
      // The first lease to end, by the clients' clocks: try again then, as Java sleeps until then.
      const std::int64_t ends = detail::integer_of(*reply->element[1], "acquire", target_->key);
      if (ends >= 0) outcome.retry_in = std::chrono::milliseconds(std::max<std::int64_t>(1, ends - std::stoll(now) + 1));
    }
    return outcome;
  };
  const auto began = detail::CounterEvents::Clock::now();
  int attempts = 0;
  const detail::TryStep step = [&]() -> detail::Task<detail::TryOutcome> {
    ++attempts;
    co_return attempt();
  };
  const detail::CounterEvents events(target_->state(), target_->key, "leased_semaphore");
  (void)detail::report_wait(
      detail::wait_announced(target_->state(), target_->channel, nullptr, deadline, stop, options_.recheck, step),
      events, began, 1, attempts, stop)
      .run_now();
  return permit;
}

bool LeasedSemaphore::release_quietly(const std::string& permit) noexcept {
  try {
    return release(permit);
  } catch (...) {  // best effort: a permit with a lease comes back at its end anyway
    return false;
  }
}

bool LeasedSemaphore::release(const std::string& permit) {
  const detail::CounterEvents events(target_->state(), target_->key, "leased_semaphore");
  bool held = false;
  try {
    const auto reply =
        run(*target_, detail::kLeasedRelease, {stored(permit), now_ms(), target_->publish_command()}, "release");
    held = detail::integer_of(*reply, "release", target_->key) == 1;
  } catch (...) {
    events.released(1, detail::current_error_code());
    throw;
  }
  // Not held under its lease any more (ended, or an unknown id): told as a lock's lost release is.
  events.released(1, held ? std::error_code() : make_error_code(Errc::lease_lost));
  return held;
}

bool LeasedSemaphore::update_lease(const std::string& permit, std::chrono::milliseconds lease) {
  const auto reply = run(*target_, detail::kLeasedRenew,
                         {stored(permit), lease_end(lease), now_ms(), target_->publish_command()}, "renew");
  return detail::integer_of(*reply, "renew", target_->key) == 1;
}

}  // namespace lockbridge
