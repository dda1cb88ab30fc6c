#include "lockbridge/leased_semaphore.hpp"

#include "core/announced_key.hpp"
#include "core/leased_calls.hpp"
#include "strategies/redisson.hpp"
#include "strategies/strategy.hpp"
#include "util/option_limits.hpp"

namespace lockbridge {

void LeasedSemaphoreOptions::validate() const {
  detail::require_within("acquire_timeout", acquire_timeout, std::chrono::milliseconds::zero());
  detail::require_within("recheck", recheck, std::chrono::milliseconds(1));
}

std::string LeasedSemaphore::leases_name(std::string_view key) {
  return detail::RedissonStrategy::suffixed(key, "timeout");
}

LeasedSemaphore::LeasedSemaphore(Client client, std::string key, LeasedSemaphoreOptions options)
    : target_(std::make_shared<const detail::AnnouncedKey>(
          detail::leased_calls::announced(client, std::move(key), options, "LeasedSemaphore"))),
      options_(options) {}

const std::string& LeasedSemaphore::key() const noexcept { return target_->key; }

namespace calls = detail::leased_calls;

bool LeasedSemaphore::try_set_permits(std::int64_t permits) {
  return target_->in_place(
      [&](auto& routes, auto& semaphore) { return calls::try_set_permits(routes, semaphore, permits); });
}

std::int64_t LeasedSemaphore::add_permits(std::int64_t permits) {
  return target_->in_place(
      [&](auto& routes, auto& semaphore) { return calls::add_permits(routes, semaphore, permits); });
}

std::int64_t LeasedSemaphore::available() { return target_->in_place(calls::available); }

std::optional<std::string> LeasedSemaphore::try_acquire(std::chrono::milliseconds lease) {
  // A deadline already past: one attempt.
  return acquire_until_steady(std::chrono::steady_clock::time_point::min(), lease, {});
}

std::vector<std::string> LeasedSemaphore::try_acquire(std::int64_t permits, std::chrono::milliseconds lease) {
  return acquire_until_steady(std::chrono::steady_clock::time_point::min(), permits, lease, {});
}

std::string LeasedSemaphore::acquire(std::chrono::milliseconds lease) { return acquire(1, lease).front(); }

std::vector<std::string> LeasedSemaphore::acquire(std::int64_t permits, std::chrono::milliseconds lease) {
  std::vector<std::string> taken =
      acquire_until_steady(std::chrono::steady_clock::now() + options_.acquire_timeout, permits, lease, {});
  if (taken.empty()) {
    const std::string wanted = permits == 1 ? "no permit" : std::to_string(permits) + " permits not";
    throw Error(Errc::timeout,
                detail::describe("acquire", target_->key) + ": " + wanted + " available within acquire_timeout");
  }
  return taken;
}

std::optional<std::string> LeasedSemaphore::acquire_until_steady(std::chrono::steady_clock::time_point deadline,
                                                                 std::chrono::milliseconds lease,
                                                                 std::stop_token stop) {
  std::vector<std::string> taken = acquire_until_steady(deadline, 1, lease, std::move(stop));
  if (taken.empty()) return std::nullopt;
  return std::move(taken.front());
}

std::vector<std::string> LeasedSemaphore::acquire_until_steady(std::chrono::steady_clock::time_point deadline,
                                                               std::int64_t permits, std::chrono::milliseconds lease,
                                                               std::stop_token stop) {
  return target_->in_place([&](auto& routes, auto& semaphore) {
    return calls::acquire(routes, semaphore, options_.ids, permits, lease, nullptr, deadline, stop, options_.recheck);
  });
}

bool LeasedSemaphore::release(const std::string& permit) {
  return target_->in_place(
      [&](auto& routes, auto& semaphore) { return calls::release(routes, semaphore, options_.ids, permit); });
}

std::int64_t LeasedSemaphore::release(const std::vector<std::string>& permits) {
  return target_->in_place(
      [&](auto& routes, auto& semaphore) { return calls::release(routes, semaphore, options_.ids, permits); });
}

bool LeasedSemaphore::update_lease(const std::string& permit, std::chrono::milliseconds lease) {
  return target_->in_place([&](auto& routes, auto& semaphore) {
    return calls::update_lease(routes, semaphore, options_.ids, permit, lease);
  });
}

}  // namespace lockbridge
