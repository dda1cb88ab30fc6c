#include "waiting/event_wait.hpp"

#include <algorithm>
#include <utility>

#include "waiting/change_wait.hpp"

namespace lockbridge::detail {

namespace {
// What a ChangeWait hears from a place in the local line.
ChangeSource changes_of(LocalLine::Place& place) {
  return [&place](std::function<void()> changed) { place.on_change(std::move(changed)); };
}
}  // namespace

EventWait::EventWait(Contender& contender, const WaitPlan& plan, std::shared_ptr<EventLoop> loop)
    : contender_(contender),
      plan_(plan),
      loop_(std::move(loop)),
      listener_(plan.state, plan.channel.value_or(ReleaseChannel{}), plan.stop) {}

Task<bool> EventWait::wait_for_turn(Clock::time_point deadline) {
  LocalLine::Place& place = place_.emplace(plan_.line);
  ChangeWait turn(loop_, changes_of(place), deadline, plan_.stop, [&place] { return place.first_now(); });
  co_return co_await turn;
}

Task<void> EventWait::wait_while_held_here(Clock::time_point until) {
  if (!place_) co_return;
  LocalLine::Place& place = *place_;
  const auto held_until = place.held_until_now();
  if (!held_until) co_return;
  ChangeWait released(loop_, changes_of(place), std::min(until, *held_until), plan_.stop,
                      [&place] { return !place.held_until_now(); });
  (void)co_await released;
}

}  // namespace lockbridge::detail
