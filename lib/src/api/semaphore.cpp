#include "lockbridge/semaphore.hpp"

#include "core/announced_key.hpp"
#include "core/semaphore_calls.hpp"
#include "strategies/redisson.hpp"
#include "strategies/strategy.hpp"
#include "util/option_limits.hpp"

namespace lockbridge {

void SemaphoreOptions::validate() const {
  detail::require_within("acquire_timeout", acquire_timeout, std::chrono::milliseconds::zero());
  detail::require_within("recheck", recheck, std::chrono::milliseconds(1));
}

std::string Semaphore::channel_name(std::string_view key) {
  return detail::RedissonStrategy::prefixed("redisson_sc", key);
}

Semaphore::Semaphore(Client client, std::string key, SemaphoreOptions options)
    : target_(std::make_shared<const detail::AnnouncedKey>(
          detail::semaphore_calls::announced(client, std::move(key), options, "Semaphore"))),
      options_(options) {}

const std::string& Semaphore::key() const noexcept { return target_->key; }

namespace calls = detail::semaphore_calls;

bool Semaphore::try_set_permits(std::int64_t permits) {
  return target_->in_place(
      [&](auto& routes, auto& semaphore) { return calls::try_set_permits(routes, semaphore, permits); });
}

std::int64_t Semaphore::add_permits(std::int64_t permits) {
  return target_->in_place(
      [&](auto& routes, auto& semaphore) { return calls::add_permits(routes, semaphore, permits); });
}

std::int64_t Semaphore::available() const { return target_->in_place(calls::available); }

std::int64_t Semaphore::drain() { return target_->in_place(calls::drain); }

bool Semaphore::try_acquire(std::int64_t permits) {
  return target_->in_place(
      [&](auto& routes, auto& semaphore) { return calls::try_acquire(routes, semaphore, permits); });
}

void Semaphore::acquire(std::int64_t permits) {
  if (!acquire_until_steady(std::chrono::steady_clock::now() + options_.acquire_timeout, permits, {})) {
    throw Error(Errc::timeout, detail::describe("acquire", target_->key) + ": " + std::to_string(permits) +
                                   " permit(s) not available within acquire_timeout");
  }
}

bool Semaphore::acquire_until_steady(std::chrono::steady_clock::time_point deadline, std::int64_t permits,
                                     std::stop_token stop) {
  return target_->in_place([&](auto& routes, auto& semaphore) {
    return calls::acquire(routes, semaphore, permits, nullptr, deadline, stop, options_.recheck);
  });
}

void Semaphore::release(std::int64_t permits) {
  target_->in_place([&](auto& routes, auto& semaphore) { return calls::release(routes, semaphore, permits); });
}

}  // namespace lockbridge
