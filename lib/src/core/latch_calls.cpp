#include "core/latch_calls.hpp"

#include "core/key_script.hpp"
#include "lockbridge/error.hpp"
#include "observe/counter_events.hpp"
#include "strategies/scripts.hpp"
#include "waiting/announced_wait.hpp"

namespace lockbridge::detail::latch_calls {

AnnouncedKey announced(const Client& client, std::string key, const LatchOptions& options, std::string_view front) {
  options.validate();
  std::string channel = Latch::channel_name(key);
  return announced_key(client, std::move(key), std::move(channel), front, options.sharded_subscription);
}

Task<bool> try_set_count(Routes& routes, const AnnouncedKey& latch, std::int64_t count) {
  // Redis's Lua counts in doubles, exact below 2^53.
  if (count <= 0 || count >= (std::int64_t{1} << 53)) {
    throw Error(Errc::bad_option, "Latch::try_set_count: the count must be between 1 and 2^53 - 1");
  }
  const ScriptCall call{
      &kRedissonTrySet, {latch.key, latch.channel.name}, {std::to_string(count), "1", latch.publish_command()}};
  const ReplyPtr reply = co_await call_on_key(routes, latch.state().scripts, call, "set the count of");
  co_return integer_of(*reply, "set the count of", latch.key) == 1;
}

Task<void> count_down(Routes& routes, const AnnouncedKey& latch) {
  const ScriptCall call{&kRedissonLatchCountDown, {latch.key, latch.channel.name}, {"0", latch.publish_command()}};
  const ReplyPtr reply = co_await call_on_key(routes, latch.state().scripts, call, "count down");
  (void)integer_of(*reply, "count down", latch.key);
}

Task<std::int64_t> count(Routes& routes, const AnnouncedKey& latch, Routes::Clock::time_point deadline) {
  return read_integer(routes, latch.key, "read the count of", deadline);
}

Task<bool> wait(Routes& routes, const AnnouncedKey& latch, std::shared_ptr<EventLoop> loop,
                std::chrono::steady_clock::time_point deadline, std::stop_token stop,
                std::chrono::milliseconds recheck) {
  const auto began = CounterEvents::Clock::now();
  int attempts = 0;
  const TryStep open = [&]() -> Task<TryOutcome> {
    ++attempts;
    co_return TryOutcome::finished(co_await count(routes, latch, deadline) <= 0);
  };
  const CounterEvents events(latch.state(), latch.key, "latch");
  Task<bool> waiting = wait_announced(latch.state(), latch.channel, std::move(loop), deadline, stop, recheck, open);
  co_return co_await report_wait(std::move(waiting), events, began, 0, attempts, stop);
}

}  // namespace lockbridge::detail::latch_calls
