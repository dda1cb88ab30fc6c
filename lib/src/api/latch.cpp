#include "lockbridge/latch.hpp"

#include "core/announced_key.hpp"
#include "core/latch_calls.hpp"
#include "util/option_limits.hpp"

namespace lockbridge {

void LatchOptions::validate() const { detail::require_within("recheck", recheck, std::chrono::milliseconds(1)); }

std::string Latch::channel_name(std::string_view key) {
  return "redisson_countdownlatch__channel__{" + std::string(key) + "}";
}

Latch::Latch(Client client, std::string key, LatchOptions options)
    : target_(std::make_shared<const detail::AnnouncedKey>(
          detail::latch_calls::announced(client, std::move(key), options, "Latch"))),
      options_(options) {}

const std::string& Latch::key() const noexcept { return target_->key; }

bool Latch::try_set_count(std::int64_t count) {
  return target_->in_place(
      [&](auto& routes, auto& latch) { return detail::latch_calls::try_set_count(routes, latch, count); });
}

void Latch::count_down() { target_->in_place(detail::latch_calls::count_down); }

std::int64_t Latch::count() const {
  return target_->in_place([](auto& routes, auto& latch) { return detail::latch_calls::count(routes, latch); });
}

bool Latch::wait(std::stop_token stop) const {
  return wait_until_steady(std::chrono::steady_clock::time_point::max(), std::move(stop));
}

bool Latch::wait_until_steady(std::chrono::steady_clock::time_point deadline, std::stop_token stop) const {
  return target_->in_place([&](auto& routes, auto& latch) {
    return detail::latch_calls::wait(routes, latch, nullptr, deadline, stop, options_.recheck);
  });
}

}  // namespace lockbridge
