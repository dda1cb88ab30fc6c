#include "lockbridge/semaphore.hpp"

#include "core/announced_key.hpp"
#include "core/key_script.hpp"
#include "strategies/redisson.hpp"
#include "strategies/scripts.hpp"
#include "util/option_limits.hpp"
#include "waiting/announced_wait.hpp"

namespace lockbridge {

void SemaphoreOptions::validate() const {
  detail::require_within("acquire_timeout", acquire_timeout, std::chrono::milliseconds::zero());
  detail::require_within("recheck", recheck, std::chrono::milliseconds(1));
}

std::string Semaphore::channel_name(std::string_view key) { return detail::RedissonStrategy::prefixed("redisson_sc", key); }

Semaphore::Semaphore(Client client, std::string key, SemaphoreOptions options) : options_(options) {
  options_.validate();
  std::string channel = channel_name(key);
  target_ = std::make_shared<const detail::AnnouncedKey>(
      detail::announced_key(client, std::move(key), std::move(channel), "Semaphore",
                                options_.sharded_subscription));
}

const std::string& Semaphore::key() const noexcept { return target_->key; }

namespace {

void require_permits(std::int64_t permits, std::int64_t least, const char* call) {
  detail::require_java_int(std::string("Semaphore::") + call + ": permits", permits, least);
}

// One script on the permits, its integer reply.
std::int64_t run(const detail::AnnouncedKey& target, const detail::Script& script, std::vector<std::string> args,
                 bool announces, std::string_view operation) {
  std::vector<std::string> keys{target.key};
  if (announces) keys.push_back(target.channel.name);
  const detail::ScriptCall call{&script, std::move(keys), std::move(args)};
  const auto reply = detail::run_on_key(target.state(), call, operation);
  return detail::integer_of(*reply, operation, target.key);
}

}  // namespace

bool Semaphore::try_set_permits(std::int64_t permits) {
  require_permits(permits, 0, "try_set_permits");
  return run(*target_, detail::kRedissonTrySet,
             {std::to_string(permits), std::to_string(permits), target_->publish_command()}, true,
             "set the permits of") == 1;
}

std::int64_t Semaphore::add_permits(std::int64_t permits) {
  require_permits(permits, -detail::kJavaIntMax, "add_permits");
  return run(*target_, detail::kRedissonSemaphoreAdd, {std::to_string(permits), target_->publish_command()}, true,
             "add permits to");
}

std::int64_t Semaphore::available() const { return target_->read_integer("read the permits of"); }

std::int64_t Semaphore::drain() { return run(*target_, detail::kRedissonSemaphoreDrain, {}, false, "drain"); }

bool Semaphore::try_acquire(std::int64_t permits) {
  require_permits(permits, 1, "try_acquire");
  return run(*target_, detail::kRedissonSemaphoreAcquire, {std::to_string(permits)}, false, "acquire") == 1;
}

void Semaphore::acquire(std::int64_t permits) {
  if (!acquire_until_steady(std::chrono::steady_clock::now() + options_.acquire_timeout, permits, {})) {
    throw Error(Errc::timeout, detail::describe("acquire", target_->key) + ": " + std::to_string(permits) +
                                   " permit(s) not available within acquire_timeout");
  }
}

bool Semaphore::acquire_until_steady(std::chrono::steady_clock::time_point deadline, std::int64_t permits,
                                     std::stop_token stop) {
  require_permits(permits, 1, "acquire");
  return detail::wait_announced(target_->state(), target_->channel, deadline, stop, options_.recheck,
                                [&] { return detail::TryOutcome::finished(try_acquire(permits)); });
}

void Semaphore::release(std::int64_t permits) {
  require_permits(permits, 1, "release");
  (void)run(*target_, detail::kRedissonSemaphoreAdd, {std::to_string(permits), target_->publish_command()}, true,
            "release");
}

}  // namespace lockbridge
