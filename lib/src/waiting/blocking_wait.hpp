// The blocking front's WaitDriver: each step the waiting loop awaits is done in place, on the
// caller's thread (an attempt's round trip, a sleep on a condition variable), so the loop runs to
// its end without suspending.
#pragma once

#include <optional>

#include "waiting/local_line.hpp"
#include "waiting/release_listener.hpp"
#include "waiting/wait_driver.hpp"
#include "waiting/wait_loop.hpp"

namespace lockbridge::detail {

class BlockingWait final : public WaitDriver {
 public:
  BlockingWait(Contender& contender, const WaitPlan& plan);

  // The lock's own coroutines: with the blocking front's routes they complete in place.
  Task<TargetAttempt> attempt(const AttemptRequest& request) override { return contender_.attempt(request); }
  void leave_queue(std::string_view waiter) noexcept override;
  void starving(std::chrono::nanoseconds waited) noexcept override { contender_.starving(waited); }
  void hold_granted(const TargetAttempt& attempt, Clock::time_point started) override {
    contender_.hold_granted(attempt, started);
  }

  Task<bool> wait_for_turn(Clock::time_point deadline) override;
  Task<void> wait_while_held_here(Clock::time_point until) override;

  void listen_if_subscribed() override { listener_.listen_if_subscribed(); }
  Task<bool> listen(Clock::time_point until) override;
  void switch_to(ReleaseChannel channel) override { listener_.switch_to(std::move(channel)); }
  bool listening() const noexcept override { return listener_.listening(); }
  std::optional<std::string> grant_heard(std::string_view me) const override { return listener_.grant_heard(me); }
  void arm() override { listener_.arm(); }
  void drop_if_redirected() override { listener_.drop_if_redirected(); }
  Task<bool> wait_until(Clock::time_point until, std::string_view me) override;

 private:
  Contender& contender_;
  const WaitPlan& plan_;
  ReleaseListener listener_;
  std::optional<LocalLine::Place> place_;  // taken by wait_for_turn
};

}  // namespace lockbridge::detail
