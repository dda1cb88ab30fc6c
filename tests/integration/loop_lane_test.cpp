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

// Enters the lane, records its name, and keeps the turn until `leave` is set and the loop runs.
Task<void> visit(LoopLane& lane, std::string name, std::vector<std::string>& order, LoopLane::Pass& kept) {
  LoopLane::Pass pass = co_await lane.enter();
  order.push_back(std::move(name));
  kept = std::move(pass);
}

TEST(LoopLane, TurnsAreGivenInArrivalOrderOneAtATime) {
  LoopRunner runner;
  LoopLane lane(*runner.loop());
  std::vector<std::string> order;
  LoopLane::Pass a_pass, b_pass, c_pass;
  Task<void> a = visit(lane, "a", order, a_pass);
  Task<void> b = visit(lane, "b", order, b_pass);
  Task<void> c = visit(lane, "c", order, c_pass);
  runner.io().poll();  // what is ready runs: nothing lets b in while a keeps its turn
  runner.io().restart();
  EXPECT_EQ(order, std::vector<std::string>{"a"});
  a_pass = LoopLane::Pass();
  EXPECT_TRUE(runner.run_until([&] { return order.size() == 2; }));
  EXPECT_EQ(order.back(), "b");
  EXPECT_FALSE(c.done());
  b_pass = LoopLane::Pass();
  EXPECT_TRUE(runner.run_until([&] { return order.size() == 3; }));
  EXPECT_EQ(order.back(), "c");
}

TEST(LoopLane, AWaiterCancelledWhileWaitingIsSkipped) {
  LoopRunner runner;
  LoopLane lane(*runner.loop());
  std::vector<std::string> order;
  LoopLane::Pass a_pass, b_pass, c_pass;
  Task<void> a = visit(lane, "a", order, a_pass);
  std::optional<Task<void>> b(visit(lane, "b", order, b_pass));
  Task<void> c = visit(lane, "c", order, c_pass);
  b.reset();  // cancelled while it waits
  a_pass = LoopLane::Pass();
  EXPECT_TRUE(runner.run_until([&] { return order.size() == 2; }));
  EXPECT_EQ(order, (std::vector<std::string>{"a", "c"}));
}

TEST(LoopLane, AWaiterCancelledAfterItWasLetInPassesTheTurnOn) {
  LoopRunner runner;
  LoopLane lane(*runner.loop());
  std::vector<std::string> order;
  LoopLane::Pass a_pass, b_pass, c_pass;
  Task<void> a = visit(lane, "a", order, a_pass);
  std::optional<Task<void>> b(visit(lane, "b", order, b_pass));
  Task<void> c = visit(lane, "c", order, c_pass);
  a_pass = LoopLane::Pass();  // b is let in: its resumption is posted to the loop
  b.reset();                  // and it is cancelled before the loop resumes it
  EXPECT_TRUE(runner.run_until([&] { return order.size() == 2; }));
  EXPECT_EQ(order, (std::vector<std::string>{"a", "c"}));
  c_pass = LoopLane::Pass();
  Task<void> d = visit(lane, "d", order, a_pass);  // the lane is free again: at once
  EXPECT_EQ(order.back(), "d");
}

}  // namespace
}  // namespace lockbridge::testing
