// Task<T>, the coroutine that the waiting loop is written as: run in place by the blocking front,
// started and resumed from outside by an event-driven one.
#include <gtest/gtest.h>

#include <coroutine>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "util/task.hpp"

namespace lockbridge::detail {
namespace {

Task<int> answer(int value) { co_return value; }

Task<long long> sum_of(int count) {
  long long total = 0;
  for (int i = 1; i <= count; ++i) total += co_await answer(i);
  co_return total;
}

Task<int> fails() {
  throw std::runtime_error("step failed");
  co_return 0;
}

Task<std::string> catches() {
  try {
    co_await fails();
  } catch (const std::runtime_error& error) {
    co_return std::string("caught: ") + error.what();
  }
  co_return "not thrown";
}

TEST(Task, RunsInPlaceAndReturnsItsValue) { EXPECT_EQ(sum_of(4).run_now(), 10); }

TEST(Task, AnAwaitedStepsExceptionReachesItsAwaiter) {
  EXPECT_EQ(catches().run_now(), "caught: step failed");
  EXPECT_THROW(fails().run_now(), std::runtime_error);
}

TEST(Task, AMillionStepsThatCompleteAtOnceDoNotGrowTheStack) {
  // Each awaited task resumes its awaiter by symmetric transfer: a stack frame per step would
  // overflow the stack long before this.
  EXPECT_EQ(sum_of(1'000'000).run_now(), 500'000'500'000LL);
}

// A step that completes later, from outside: what an event-driven front's steps are.
struct Later {
  std::coroutine_handle<> waiting{};
  int value = 0;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> handle) noexcept { waiting = handle; }
  int await_resume() const noexcept { return value; }
  void complete(int with) {
    value = with;
    std::exchange(waiting, {}).resume();
  }
};

Task<int> twice_later(Later& later) {
  const int first = co_await later;
  const int second = co_await later;
  co_return first + second;
}

TEST(Task, AStartedTaskSuspendsOnAStepThatCompletesLaterAndIsResumedFromOutside) {
  Later later;
  Task<int> task = twice_later(later);
  bool done = false;
  task.then([&] { done = true; });
  EXPECT_FALSE(done);
  ASSERT_TRUE(later.waiting);
  later.complete(20);
  EXPECT_FALSE(done);
  later.complete(22);
  EXPECT_TRUE(done);
  EXPECT_EQ(task.result(), 42);
}

TEST(Task, RunningInPlaceATaskThatSuspendsIsALogicError) {
  Later later;
  EXPECT_THROW(twice_later(later).run_now(), std::logic_error);
}

TEST(Task, DestroyingASuspendedTaskDestroysWhatItsFrameHolds) {
  Later later;
  const auto held = std::make_shared<int>(7);
  std::weak_ptr<int> watch = held;
  {
    auto keep = [](std::shared_ptr<int> mine, Later& step) -> Task<int> { co_return *mine + co_await step; };
    Task<int> task = keep(held, later);
    task.then([] {});
    ASSERT_TRUE(later.waiting);
  }
  later.waiting = {};
  EXPECT_EQ(watch.use_count(), 1);  // only `held`: the frame's copy went with the task
}

}  // namespace
}  // namespace lockbridge::detail
