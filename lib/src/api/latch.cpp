#include "lockbridge/latch.hpp"

#include "core/announced_key.hpp"
#include "core/key_script.hpp"
#include "strategies/scripts.hpp"
#include "util/option_limits.hpp"
#include "waiting/announced_wait.hpp"

namespace lockbridge {

void LatchOptions::validate() const { detail::require_within("recheck", recheck, std::chrono::milliseconds(1)); }

std::string Latch::channel_name(std::string_view key) {
  return "redisson_countdownlatch__channel__{" + std::string(key) + "}";
}

Latch::Latch(Client client, std::string key, LatchOptions options) : options_(options) {
  options_.validate();
  std::string channel = channel_name(key);
  target_ = std::make_shared<const detail::AnnouncedKey>(
      detail::announced_key(client, std::move(key), std::move(channel), "Latch",
                                options_.sharded_subscription));
}

const std::string& Latch::key() const noexcept { return target_->key; }

bool Latch::try_set_count(std::int64_t count) {
  // Redis's Lua counts in doubles, exact below 2^53.
  if (count <= 0 || count >= (std::int64_t{1} << 53)) {
    throw Error(Errc::bad_option, "Latch::try_set_count: the count must be between 1 and 2^53 - 1");
  }
  const detail::ScriptCall call{&detail::kRedissonTrySet,
                                {target_->key, target_->channel.name},
                                {std::to_string(count), "1", target_->publish_command()}};
  const auto reply = detail::run_on_key(target_->state(), call, "set the count of");
  return detail::integer_of(*reply, "set the count of", target_->key) == 1;
}

void Latch::count_down() {
  const detail::ScriptCall call{&detail::kRedissonLatchCountDown,
                                {target_->key, target_->channel.name},
                                {"0", target_->publish_command()}};
  const auto reply = detail::run_on_key(target_->state(), call, "count down");
  (void)detail::integer_of(*reply, "count down", target_->key);
}

std::int64_t Latch::count() const { return target_->read_integer("read the count of"); }

bool Latch::wait(std::stop_token stop) const {
  return wait_until_steady(std::chrono::steady_clock::time_point::max(), std::move(stop));
}

bool Latch::wait_until_steady(std::chrono::steady_clock::time_point deadline, std::stop_token stop) const {
  return detail::wait_announced(target_->state(), target_->channel, deadline, stop, options_.recheck,
                                [this] { return detail::TryOutcome::finished(count() <= 0); });
}

}  // namespace lockbridge
