// Waiting for a state in Redis that announcements bring forward, rather than for a lock: a latch's
// count reaching zero, a semaphore's permits coming back. The lock's waiting loop (wait_loop.hpp)
// knows holders, leases, queues and grants; these waits know none of it: try, and when that fails,
// try again on every announcement on the object's channel and at least every `recheck` (a message
// may never come: a Java peer's TTL ran out, an operator set the key by hand), until the deadline
// or a stop request. Written once for both fronts: with a loop, its waits are the loop's.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>

#include "lockbridge/event_loop.hpp"
#include "redis/client_state.hpp"
#include "util/task.hpp"
#include "waiting/release_channel.hpp"

namespace lockbridge::detail {

// What one try found.
struct TryOutcome {
  bool done = false;
  // Not done: when a try may succeed with nothing announced (a permit's lease ends then), if sooner
  // than `recheck`.
  std::optional<std::chrono::milliseconds> retry_in;

  static TryOutcome finished(bool done) {
    TryOutcome outcome;
    outcome.done = done;
    return outcome;
  }
};

using TryStep = std::function<Task<TryOutcome>()>;

// `attempt` runs at once, and again after each announcement, `recheck` or its own retry_in; done
// ends the wait (true). false when `deadline` passes or `stop` is requested first. Subscribes only
// once the first attempt has failed. Throws what `attempt` throws. `loop` null: the blocking
// front's wait, in place (then `attempt`'s tasks must end in place too).
Task<bool> wait_announced(ClientState& state, const ReleaseChannel& channel, std::shared_ptr<EventLoop> loop,
                          std::chrono::steady_clock::time_point deadline, std::stop_token stop,
                          std::chrono::milliseconds recheck, TryStep attempt);

}  // namespace lockbridge::detail
