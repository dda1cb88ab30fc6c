#include "core/semaphore_calls.hpp"

#include <string>
#include <vector>

#include "core/key_script.hpp"
#include "observe/counter_events.hpp"
#include "strategies/scripts.hpp"
#include "waiting/announced_wait.hpp"

namespace lockbridge::detail::semaphore_calls {

namespace {

void require_permits(std::int64_t permits, std::int64_t least, const char* call) {
  require_java_int(std::string("Semaphore::") + call + ": permits", permits, least);
}

// One script on the permits (the channel as its second key when it announces), its integer reply;
// no wait for a route past `deadline` (a waiter's).
Task<std::int64_t> run(Routes& routes, const AnnouncedKey& semaphore, const Script& script,
                       std::vector<std::string> args, bool announces, std::string_view operation,
                       Routes::Clock::time_point deadline = Routes::Clock::time_point::max()) {
  std::vector<std::string> keys{semaphore.key};
  if (announces) keys.push_back(semaphore.channel.name);
  const ScriptCall call{&script, std::move(keys), std::move(args)};
  const ReplyPtr reply = co_await call_on_key(routes, semaphore.state().scripts, call, operation, deadline);
  co_return integer_of(*reply, operation, semaphore.key);
}

}  // namespace

AnnouncedKey announced(const Client& client, std::string key, const SemaphoreOptions& options, std::string_view front) {
  options.validate();
  std::string channel = Semaphore::channel_name(key);
  return announced_key(client, std::move(key), std::move(channel), front, options.sharded_subscription);
}

Task<bool> try_set_permits(Routes& routes, const AnnouncedKey& semaphore, std::int64_t permits) {
  require_permits(permits, 0, "try_set_permits");
  std::vector<std::string> args{std::to_string(permits), std::to_string(permits), semaphore.publish_command()};
  co_return co_await run(routes, semaphore, kRedissonTrySet, std::move(args), true, "set the permits of") == 1;
}

Task<std::int64_t> add_permits(Routes& routes, const AnnouncedKey& semaphore, std::int64_t permits) {
  require_permits(permits, -kJavaIntMax, "add_permits");
  std::vector<std::string> args{std::to_string(permits), semaphore.publish_command()};
  co_return co_await run(routes, semaphore, kRedissonSemaphoreAdd, std::move(args), true, "add permits to");
}

Task<std::int64_t> available(Routes& routes, const AnnouncedKey& semaphore) {
  return read_integer(routes, semaphore.key, "read the permits of");
}

Task<std::int64_t> drain(Routes& routes, const AnnouncedKey& semaphore) {
  return run(routes, semaphore, kRedissonSemaphoreDrain, {}, false, "drain");
}

namespace {
// One acquire script, unreported: true when the permits were taken.
Task<bool> take(Routes& routes, const AnnouncedKey& semaphore, std::int64_t permits,
               Routes::Clock::time_point deadline = Routes::Clock::time_point::max()) {
  std::vector<std::string> args{std::to_string(permits)};
  co_return co_await run(routes, semaphore, kRedissonSemaphoreAcquire, std::move(args), false, "acquire", deadline) ==
            1;
}
}  // namespace

Task<bool> try_acquire(Routes& routes, const AnnouncedKey& semaphore, std::int64_t permits) {
  require_permits(permits, 1, "try_acquire");
  const auto began = CounterEvents::Clock::now();
  const int attempts = 1;
  const std::stop_token unstoppable;
  const CounterEvents events(semaphore.state(), semaphore.key, "semaphore");
  Task<bool> taking = take(routes, semaphore, permits);
  co_return co_await report_wait(std::move(taking), events, began, permits, attempts, unstoppable);
}

Task<bool> acquire(Routes& routes, const AnnouncedKey& semaphore, std::int64_t permits, std::shared_ptr<EventLoop> loop,
                   std::chrono::steady_clock::time_point deadline, std::stop_token stop,
                   std::chrono::milliseconds recheck) {
  require_permits(permits, 1, "acquire");
  const auto began = CounterEvents::Clock::now();
  int attempts = 0;
  const TryStep attempt = [&]() -> Task<TryOutcome> {
    ++attempts;
    co_return TryOutcome::finished(co_await take(routes, semaphore, permits, deadline));
  };
  const CounterEvents events(semaphore.state(), semaphore.key, "semaphore");
  Task<bool> waiting =
      wait_announced(semaphore.state(), semaphore.channel, std::move(loop), deadline, stop, recheck, attempt);
  co_return co_await report_wait(std::move(waiting), events, began, permits, attempts, stop);
}

Task<void> release(Routes& routes, const AnnouncedKey& semaphore, std::int64_t permits) {
  require_permits(permits, 1, "release");
  const CounterEvents events(semaphore.state(), semaphore.key, "semaphore");
  std::vector<std::string> args{std::to_string(permits), semaphore.publish_command()};
  try {
    (void)co_await run(routes, semaphore, kRedissonSemaphoreAdd, std::move(args), true, "release");
  } catch (...) {
    events.released(permits, current_error_code());
    throw;
  }
  events.released(permits, {});
}

}  // namespace lockbridge::detail::semaphore_calls
