#include "waiting/blocking_wait.hpp"

namespace lockbridge::detail {

BlockingWait::BlockingWait(Contender& contender, const WaitPlan& plan)
    : contender_(contender), plan_(plan), listener_(plan.state, plan.channel.value_or(ReleaseChannel{}), plan.stop) {}

// Each step is a coroutine that completes before it returns to its awaiter: the work is done in
// place, and the result handed back as the loop resumes, with nothing ever suspended.
void BlockingWait::leave_queue(std::string_view waiter) noexcept {
  try {
    contender_.leave_queue(std::string(waiter)).run_now();
  } catch (...) {  // the task itself never throws; only an allocation could fail here
  }
}

Task<bool> BlockingWait::wait_for_turn(Clock::time_point deadline) {
  place_.emplace(plan_.line);
  co_return place_->wait_for_turn(deadline, plan_.stop);
}

Task<void> BlockingWait::wait_while_held_here(Clock::time_point until) {
  if (place_) place_->wait_while_held_here(until, plan_.stop);
  co_return;
}

Task<bool> BlockingWait::listen(Clock::time_point until) { co_return listener_.listen(until); }

Task<bool> BlockingWait::wait_until(Clock::time_point until, std::string_view me) {
  co_return listener_.wait_until(until, me);
}

}  // namespace lockbridge::detail
