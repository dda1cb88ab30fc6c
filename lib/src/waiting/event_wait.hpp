// The event-driven front's WaitDriver: the waiting loop's steps without a thread. An attempt is
// the lock's coroutine over its pipeline; a wait for a release or for the subscription's answer
// suspends the loop until the notifier posts a change, a timer fires or the operation is cancelled
// (waiting/change_wait.hpp); a waiter that gives up leaves its queue in the background. In the
// process-local line it takes its place beside blocking threads, and is told of its turn through
// the line's callback (LocalLine::Place::on_change).
#pragma once

#include <memory>
#include <optional>

#include "lockbridge/event_loop.hpp"
#include "util/detach.hpp"
#include "waiting/local_line.hpp"
#include "waiting/release_listener.hpp"
#include "waiting/wait_driver.hpp"
#include "waiting/wait_loop.hpp"

namespace lockbridge::detail {

class EventWait final : public WaitDriver {
 public:
  EventWait(Contender& contender, const WaitPlan& plan, std::shared_ptr<EventLoop> loop);

  Task<TargetAttempt> attempt(const AttemptRequest& request) override { return contender_.attempt(request); }
  // Not waited for: it goes on by itself, on the loop.
  void leave_queue(std::string_view waiter) noexcept override { detach(contender_.leave_queue(std::string(waiter))); }
  void starving(std::chrono::nanoseconds waited) noexcept override { contender_.starving(waited); }
  void hold_granted(const TargetAttempt& attempt, Clock::time_point started) override {
    contender_.hold_granted(attempt, started);
  }

  Task<bool> wait_for_turn(Clock::time_point deadline) override;
  Task<void> wait_while_held_here(Clock::time_point until) override;

  void listen_if_subscribed() override { listener_.listen_if_subscribed(); }
  Task<bool> listen(Clock::time_point until) override { return listener_.listen_on(loop_, until); }
  void switch_to(ReleaseChannel channel) override { listener_.switch_to(std::move(channel)); }
  bool listening() const noexcept override { return listener_.listening(); }
  std::optional<std::string> grant_heard(std::string_view me) const override { return listener_.grant_heard(me); }
  void arm() override { listener_.arm(); }
  void drop_if_redirected() override { listener_.drop_if_redirected(); }
  Task<bool> wait_until(Clock::time_point until, std::string_view me) override {
    return listener_.wait_on(loop_, until, me);
  }

 private:
  Contender& contender_;
  const WaitPlan& plan_;
  const std::shared_ptr<EventLoop> loop_;
  ReleaseListener listener_;
  std::optional<LocalLine::Place> place_;  // taken by wait_for_turn
};

}  // namespace lockbridge::detail
