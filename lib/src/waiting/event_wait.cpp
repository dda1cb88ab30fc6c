#include "waiting/event_wait.hpp"

#include <utility>

namespace lockbridge::detail {

EventWait::EventWait(Contender& contender, const WaitPlan& plan, std::shared_ptr<EventLoop> loop)
    : contender_(contender),
      loop_(std::move(loop)),
      listener_(plan.state, plan.channel.value_or(ReleaseChannel{}), plan.stop) {
  if (plan.line) throw Error(Errc::bad_option, "an event-driven lock cannot wait in the process-local line");
}

}  // namespace lockbridge::detail
