#include "waiting/change_wait.hpp"

#include <utility>

namespace lockbridge::detail {

struct ChangeWait::State {
  std::shared_ptr<EventLoop> loop;
  ChangeSource source;
  Clock::time_point until;
  std::stop_token stop;
  std::function<bool()> ready;
  std::coroutine_handle<> waiting{};
  std::unique_ptr<EventLoop::Timer> timer;
  std::optional<std::stop_callback<std::function<void()>>> on_stop;
  bool result = false;
  bool done = false;  // resumed, or given up by a destroyed coroutine: nothing more is done

  // Disarms everything that could post or fire for this wait. On the loop.
  void disarm() {
    if (source) source(nullptr);
    timer.reset();
    on_stop.reset();  // waits for a stop callback running now on another thread: it only posts
  }
};

ChangeWait::ChangeWait(std::shared_ptr<EventLoop> loop, ChangeSource source, Clock::time_point until,
                       std::stop_token stop, std::function<bool()> ready)
    : state_(std::make_shared<State>()) {
  state_->loop = std::move(loop);
  state_->source = std::move(source);
  state_->until = until;
  state_->stop = std::move(stop);
  state_->ready = std::move(ready);
}

ChangeWait::~ChangeWait() {
  if (state_->done) return;
  state_->done = true;  // the coroutine is gone (cancelled): posted checks find it done
  state_->disarm();
}

bool ChangeWait::await_ready() {
  if (state_->ready()) {
    state_->result = true;
  } else if (!state_->stop.stop_requested() && Clock::now() < state_->until) {
    return false;
  }
  state_->done = true;
  return true;
}

void ChangeWait::await_suspend(std::coroutine_handle<> waiting) {
  State& state = *state_;
  state.waiting = waiting;
  const std::weak_ptr<State> weak = state_;
  if (state.source) {
    // Called on the source's thread, perhaps with its mutex held: only a post.
    state.source([weak, loop = state.loop] {
      loop->post([weak] {
        if (const auto waiter = weak.lock()) check(waiter);
      });
    });
  }
  if (state.until != Clock::time_point::max()) {
    state.timer = state.loop->timer();
    state.timer->expire_at(state.until, [weak] {
      if (const auto waiter = weak.lock()) finish(waiter, waiter->ready());
    });
  }
  if (state.stop.stop_possible()) {
    state.on_stop.emplace(state.stop, [weak, loop = state.loop] {
      loop->post([weak] {
        if (const auto waiter = weak.lock()) finish(waiter, false);
      });
    });
  }
  // Whatever changed between await_ready and the arming above is looked at once more, on the loop.
  state.loop->post([weak] {
    if (const auto waiter = weak.lock()) check(waiter);
  });
}

bool ChangeWait::await_resume() const noexcept { return state_->result; }

void ChangeWait::check(const std::shared_ptr<State>& state) {
  if (state->done) return;
  if (state->ready()) finish(state, true);
}

void ChangeWait::finish(const std::shared_ptr<State>& state, bool result) {
  if (state->done) return;
  state->done = true;
  state->result = result;
  state->disarm();
  if (state->waiting) std::exchange(state->waiting, {}).resume();
}

Task<void> sleep_on(std::shared_ptr<EventLoop> loop, ChangeWait::Clock::duration pause) {
  ChangeWait sleep(std::move(loop), ChangeSource(), ChangeWait::Clock::now() + pause, {}, [] { return false; });
  (void)co_await sleep;
}

}  // namespace lockbridge::detail
