#include "waiting/release_listener.hpp"

#include <algorithm>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <utility>

#include "waiting/change_wait.hpp"

namespace lockbridge::detail {

namespace {
// What a ChangeWait hears from a Watch: its changes that concern `me` (Watch::on_change).
ChangeSource changes_of(ReleaseNotifier::Watch* watch, std::string_view me) {
  return [watch, me = std::string(me)](std::function<void()> changed) { watch->on_change(me, std::move(changed)); };
}
}  // namespace

void ReleaseListener::listen_if_subscribed() {
  watch_ = state_.notifier_for(channel_.name).watch(channel_, /*only_if_subscribed=*/true);
}

bool ReleaseListener::listen(Clock::time_point until) { return listen_steps(until, nullptr).run_now(); }

Task<bool> ReleaseListener::listen_on(std::shared_ptr<EventLoop> loop, Clock::time_point until) {
  return listen_steps(until, std::move(loop));
}

Task<bool> ReleaseListener::listen_steps(Clock::time_point until, std::shared_ptr<EventLoop> loop) {
  for (int tries = 0; tries < 2; ++tries) {
    // Asked each time: on Redis Cluster the slot's master may have changed since the wait began,
    // and a redirect teaches the router the new one.
    watch_ = state_.notifier_for(channel_.name).watch(channel_);
    const auto answer_by = std::min(until, Clock::now() + state_.endpoint->options().command_timeout);
    bool confirmed = false;
    if (loop) {
      ReleaseNotifier::Watch* watch = watch_.get();
      ChangeWait answered(loop, changes_of(watch, {}), answer_by, stop_, [watch] { return watch->answered_now(); });
      (void)co_await answered;
      confirmed = watch->confirmed_now();
    } else {
      confirmed = watch_->wait_subscribed(answer_by, stop_);
    }
    if (confirmed) co_return true;
    if (watch_->refused()) {
      // Nothing will be heard: not listening, so the waiter keeps to its retry policy (a queued
      // waiter would otherwise wait for a message up to the holder's lease end).
      watch_.reset();
      co_return false;
    }
    if (!watch_->redirected()) co_return false;
  }
  co_return false;
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

Task<bool> ReleaseListener::wait_on(std::shared_ptr<EventLoop> loop, Clock::time_point until, std::string_view me) {
  ReleaseNotifier::Watch* watch = watch_.get();
  std::function<bool()> heard = [] { return false; };  // nothing to hear: a plain sleep
  if (watch != nullptr) heard = [watch, mine = std::string(me)] { return watch->heard_now(mine); };
  ChangeWait wait(std::move(loop), watch != nullptr ? changes_of(watch, me) : ChangeSource(), until, stop_,
                  std::move(heard));
  co_return co_await wait;
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
