#include "waiting/announced_wait.hpp"

#include <algorithm>

#include "waiting/release_listener.hpp"

namespace lockbridge::detail {

bool wait_announced(ClientState& state, const ReleaseChannel& channel, std::chrono::steady_clock::time_point deadline,
                    const std::stop_token& stop, std::chrono::milliseconds recheck,
                    const std::function<TryOutcome()>& attempt) {
  using Clock = std::chrono::steady_clock;
  TryOutcome tried = attempt();
  if (tried.done) return true;
  if (stop.stop_requested() || Clock::now() >= deadline) return false;
  ReleaseListener listener(state, channel, stop);
  // Subscribed before the next attempt: what changes after that attempt is heard.
  bool listening = listener.listen(deadline);
  while (true) {
    listener.arm();
    tried = attempt();
    if (tried.done) return true;
    const auto now = Clock::now();
    if (stop.stop_requested() || now >= deadline) return false;
    const auto pause = std::max(std::chrono::milliseconds(1), std::min(recheck, tried.retry_in.value_or(recheck)));
    (void)listener.wait_until(std::min(deadline, now + pause));
    // A slot that moved (Redis Cluster) makes the subscription deaf: subscribe where it is now.
    listener.drop_if_redirected();
    if (listening && !listener.listening()) listening = listener.listen(deadline);
  }
}

}  // namespace lockbridge::detail
