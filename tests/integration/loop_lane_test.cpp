// The event-driven front's one-at-a-time lane (util/loop_lane.hpp) on an Asio io_context: turns
// are given in arrival order, only when the pass before is gone, and a waiter whose coroutine is
// destroyed (its operation cancelled) is skipped, whether it was still waiting or already let in.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "loop_runner.hpp"
#include "util/loop_lane.hpp"

namespace lockbridge::testing {
namespace {

using detail::LoopLane;
using detail::Task;

class LoopLaneTest : public ::testing::Test {
 protected:
  // Enters the lane as `name`, records the name once in, and keeps the turn in `kept`.
  Task<void> visit(std::string name, LoopLane::Pass& kept) {
    LoopLane::Pass pass = co_await lane_.enter();
    order_.push_back(std::move(name));
    kept = std::move(pass);
  }
  // Runs the loop until `count` visitors are in (bounded).
  bool in(std::size_t count) {
    return runner_.run_until([&] { return order_.size() == count; });
  }

  LoopRunner runner_;
  LoopLane lane_{*runner_.loop()};
  std::vector<std::string> order_;
  LoopLane::Pass a_, b_, c_;
};

TEST_F(LoopLaneTest, TurnsAreGivenInArrivalOrderOneAtATime) {
  Task<void> a = visit("a", a_);
  Task<void> b = visit("b", b_);
  Task<void> c = visit("c", c_);
  runner_.io().poll();  // what is ready runs: nothing lets b in while a keeps its turn
  runner_.io().restart();
  EXPECT_EQ(order_, std::vector<std::string>{"a"});
  a_ = LoopLane::Pass();
  EXPECT_TRUE(in(2));
  EXPECT_EQ(order_.back(), "b");
  EXPECT_FALSE(c.done());
  b_ = LoopLane::Pass();
  EXPECT_TRUE(in(3));
  EXPECT_EQ(order_.back(), "c");
}

TEST_F(LoopLaneTest, AWaiterCancelledWhileWaitingIsSkipped) {
  Task<void> a = visit("a", a_);
  std::optional<Task<void>> b(visit("b", b_));
  Task<void> c = visit("c", c_);
  b.reset();  // cancelled while it waits
  a_ = LoopLane::Pass();
  EXPECT_TRUE(in(2));
  EXPECT_EQ(order_, (std::vector<std::string>{"a", "c"}));
}

TEST_F(LoopLaneTest, AWaiterCancelledAfterItWasLetInPassesTheTurnOn) {
  Task<void> a = visit("a", a_);
  std::optional<Task<void>> b(visit("b", b_));
  Task<void> c = visit("c", c_);
  a_ = LoopLane::Pass();  // b is let in: its resumption is posted to the loop
  b.reset();              // and it is cancelled before the loop resumes it
  EXPECT_TRUE(in(2));
  EXPECT_EQ(order_, (std::vector<std::string>{"a", "c"}));
  c_ = LoopLane::Pass();
  Task<void> d = visit("d", a_);  // the lane is free again: at once
  EXPECT_EQ(order_.back(), "d");
}

}  // namespace
}  // namespace lockbridge::testing
