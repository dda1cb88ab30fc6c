#include "waiting/announced_wait.hpp"

#include <algorithm>

#include "waiting/release_listener.hpp"

namespace lockbridge::detail {

Task<bool> wait_announced(ClientState& state, const ReleaseChannel& channel, std::shared_ptr<EventLoop> loop,
                          std::chrono::steady_clock::time_point deadline, std::stop_token stop,
                          std::chrono::milliseconds recheck, TryStep attempt) {
  using Clock = std::chrono::steady_clock;
  TryOutcome tried = co_await attempt();
  if (tried.done) co_return true;
  if (stop.stop_requested() || Clock::now() >= deadline) co_return false;
  ReleaseListener listener(state, channel, stop);
  const auto listen = [&]() -> Task<bool> {
    if (loop) co_return co_await listener.listen_on(loop, deadline);
    co_return listener.listen(deadline);
  };
  // Subscribed before the next attempt: what changes after that attempt is heard.
  (void)co_await listen();
  while (true) {
    listener.arm();
    tried = co_await attempt();
    if (tried.done) co_return true;
    const auto now = Clock::now();
    if (stop.stop_requested() || now >= deadline) co_return false;
    const auto pause = std::max(std::chrono::milliseconds(1), std::min(recheck, tried.retry_in.value_or(recheck)));
    const auto until = std::min(deadline, now + pause);
    if (loop) {
      const std::string_view everyone;  // payloads name nobody
      (void)co_await listener.wait_on(loop, until, everyone);
    } else {
      (void)listener.wait_until(until);
    }
    if (stop.stop_requested()) co_return false;  // no attempt after a stop
    // A slot that moved (Redis Cluster) makes the subscription deaf: subscribe again where
    // announcements go now (also when the first subscription was never confirmed).
    listener.drop_if_redirected();
    if (!listener.listening()) (void)co_await listen();
  }
}

}  // namespace lockbridge::detail
