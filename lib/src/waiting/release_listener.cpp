#include "waiting/release_listener.hpp"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <utility>

namespace lockbridge::detail {

void ReleaseListener::listen_if_subscribed() {
  watch_ = state_.notifier_for(channel_.name).watch(channel_, /*only_if_subscribed=*/true);
}

bool ReleaseListener::listen(Clock::time_point until) {
  for (int tries = 0; tries < 2; ++tries) {
    // Asked each time: on Redis Cluster the slot's master may have changed since the wait began,
    // and a redirect teaches the router the new one.
    watch_ = state_.notifier_for(channel_.name).watch(channel_);
    if (watch_->wait_subscribed(std::min(until, Clock::now() + state_.endpoint->options().command_timeout), stop_))
      return true;
    if (watch_->refused()) {
      // Nothing will be heard: not listening, so the waiter keeps to its retry policy (a queued
      // waiter would otherwise wait for a message up to the holder's lease end).
      watch_.reset();
      return false;
    }
    if (!watch_->redirected()) return false;
  }
  return false;
}

void ReleaseListener::switch_to(ReleaseChannel channel) {
  if (channel.name == channel_.name) return;
  watch_.reset();
  channel_ = std::move(channel);
}

void ReleaseListener::arm() {
  if (watch_) watch_->arm();
}

void ReleaseListener::drop_if_redirected() {
  if (watch_ && watch_->redirected()) watch_.reset();
}

bool ReleaseListener::wait_until(Clock::time_point until, std::string_view me) {
  if (watch_) return watch_->wait_until(until, me, stop_);
  // No announcements to hear: a plain sleep, which a stop request still ends.
  std::mutex mutex;
  std::condition_variable_any never;
  std::unique_lock lock(mutex);
  never.wait_until(lock, stop_, until, [] { return false; });
  return false;
}

}  // namespace lockbridge::detail
