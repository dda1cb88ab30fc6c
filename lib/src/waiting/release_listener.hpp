// One waiter's ear for a lock's release announcements: a Watch on the notifier that hears them,
// subscribed only once the waiter has had to wait. On Redis Cluster that notifier is the one on the
// master serving the channel's slot, and a slot that moves while the caller waits makes the
// subscription hear nothing; the listener then subscribes again where releases are announced now.
// Shared by the waiting loops of Mutex and MultiMutex.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <stop_token>
#include <string_view>
#include <utility>

#include "lockbridge/event_loop.hpp"
#include "redis/client_state.hpp"
#include "util/task.hpp"
#include "waiting/release_channel.hpp"
#include "waiting/release_notifier.hpp"

namespace lockbridge::detail {

class ReleaseListener {
 public:
  using Clock = std::chrono::steady_clock;

  // Listens on nothing yet. Its waits end early once `stop` is requested.
  ReleaseListener(ClientState& state, ReleaseChannel channel, std::stop_token stop = {})
      : state_(state), channel_(std::move(channel)), stop_(std::move(stop)) {}

  // Listens from now on if the channel is already subscribed and confirmed (an earlier wait's
  // subscription lingers): no I/O, so the uncontended path never pays for a subscription.
  void listen_if_subscribed();
  // Subscribes where the channel's releases are announced now, and waits until the server
  // confirms it, or `until` (at most the command timeout). true when confirmed: from then on
  // every release is heard. A subscription answered MOVED (a slot map that missed a move) is tried
  // once more, on the master the redirect named. Listens from now on either way.
  bool listen(Clock::time_point until);
  // Listens on `channel` from now on (MultiMutex: another key of the set may block it now): a
  // different channel drops the current subscription, so listen() subscribes anew; the same one
  // changes nothing.
  void switch_to(ReleaseChannel channel);

  bool listening() const noexcept { return watch_ != nullptr; }
  // Call before each attempt: the next wait_until() returns at once if a release was announced
  // after this point.
  void arm();
  // After a failed attempt: a subscription the server refused with a redirect (its slot moved)
  // hears nothing, so it is dropped, and listen() subscribes anew.
  void drop_if_redirected();
  // Sleeps until a release announced after arm() that is addressed to `me` or to every waiter, or
  // until `until`; without a subscription, simply until `until`. true when a release woke it.
  bool wait_until(Clock::time_point until, std::string_view me = {});
  // The terms of a grant to `me` heard since arm() (ReleaseNotifier::Watch::grant_heard).
  std::optional<std::string> grant_heard(std::string_view me) const {
    return watch_ ? watch_->grant_heard(me) : std::nullopt;
  }

  // listen() and wait_until() for an event-driven waiter: nothing blocks, the waits are the
  // loop's (waiting/change_wait.hpp), and the task resumes on it.
  Task<bool> listen_on(std::shared_ptr<EventLoop> loop, Clock::time_point until);
  Task<bool> wait_on(std::shared_ptr<EventLoop> loop, Clock::time_point until, std::string_view me);

 private:
  // listen()'s steps, written once: with a loop, its wait for the server's answer is the loop's.
  Task<bool> listen_steps(Clock::time_point until, std::shared_ptr<EventLoop> loop);

  ClientState& state_;
  ReleaseChannel channel_;
  std::stop_token stop_;
  std::unique_ptr<ReleaseNotifier::Watch> watch_;
};

}  // namespace lockbridge::detail
