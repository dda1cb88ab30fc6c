// 10,000 async acquires on a few busy keys (half of their locks in the process-local line, half
// queued in Redis on their own), each cancelled at a random point (in the initiating
// call, before a request can be written; after the loop has run a little, with requests in
// flight; after a random short time, often after the grant; or never), all on one connection of
// one thread. Whatever the point, a cancelled acquire leaves no lock held and no waiter queued,
// an acquire that completes holds a lock whose value in Redis is its own (a reply delivered to
// the wrong operation would show as another's value, or as two holders), and no key is held by
// two at once. The sanitizer builds run the same soak.
#include <gtest/gtest.h>

#include <asio/bind_cancellation_slot.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>

#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "lockbridge/asio.hpp"
#include "redis_test_support.hpp"
#include "strategies/companion_keys.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

constexpr int kOperations = 10'000;
constexpr int kLanes = 48;  // operations under way at once, each on a lock of its own
constexpr int kKeys = 6;    // the locks they share

enum class CancelAt { in_the_call, after_some_loop_turns, after_a_random_time, never };

struct Tally {
  int started = 0;
  int acquired = 0;
  int cancelled = 0;
  int other_errors = 0;   // acquisitions that ended in an error other than the cancellation
  int unlock_errors = 0;  // releases that failed: apart, their acquisition is counted already
  int violations = 0;     // a second holder of a key at once
  int misrouted = 0;      // acquired, but the value in Redis is not this lock's
  int held_after_cancel = 0;
  std::string first_error;
};

class Soak {
 public:
  Soak(asio::io_context& io, AsyncClient& client, std::vector<std::string> keys)
      : io_(io), keys_(std::move(keys)), holders_(keys_.size(), 0) {
    for (int lane = 0; lane < kLanes; ++lane) {
      const std::size_t key = static_cast<std::size_t>(lane) % keys_.size();
      MutexOptions options = token_options();
      options.acquire_timeout = seconds(60);
      // Half the lanes wait in the process-local line, half on their own in Redis's queue.
      options.local_queue = lane % 2 == 0;
      lanes_.push_back(Lane{std::make_unique<AsyncMutex>(client, keys_[key], options), key});
    }
  }

  void start() {
    for (Lane& lane : lanes_) next(lane);
  }
  bool done() const { return finished_ == kLanes; }
  const Tally& tally() const { return tally_; }

 private:
  struct Lane {
    std::unique_ptr<AsyncMutex> mutex;
    std::size_t key;
  };

  void next(Lane& lane) {
    if (tally_.started == kOperations) {
      ++finished_;
      return;
    }
    ++tally_.started;
    const auto at = static_cast<CancelAt>(std::uniform_int_distribution<int>(0, 3)(random_));
    auto signal = std::make_shared<asio::cancellation_signal>();
    lane.mutex->async_lock(asio::bind_cancellation_slot(
        signal->slot(), [this, &lane, signal](std::error_code error) { ended(lane, error); }));
    const auto cancel = [signal] { signal->emit(asio::cancellation_type::terminal); };
    switch (at) {
      case CancelAt::in_the_call:
        cancel();
        break;
      case CancelAt::after_some_loop_turns:
        post_after(std::uniform_int_distribution<int>(1, 4)(random_), cancel);
        break;
      case CancelAt::after_a_random_time: {
        auto timer = std::make_shared<asio::steady_timer>(
            io_, microseconds(std::uniform_int_distribution<int>(0, 3000)(random_)));
        timer->async_wait([timer, cancel](std::error_code) { cancel(); });
        break;
      }
      case CancelAt::never:
        break;
    }
  }

  // Runs `then` after the loop has turned `turns` more times.
  template <class Then>
  void post_after(int turns, Then then) {
    if (turns == 0) {
      then();
      return;
    }
    asio::post(io_, [this, turns, then] { post_after(turns - 1, then); });
  }

  void ended(Lane& lane, std::error_code error) {
    if (error == asio::error::operation_aborted) {
      ++tally_.cancelled;
      if (lane.mutex->owns_lock()) ++tally_.held_after_cancel;
      next(lane);
      return;
    }
    if (error) {
      ++tally_.other_errors;
      if (tally_.first_error.empty()) tally_.first_error = error.message();
      next(lane);
      return;
    }
    ++tally_.acquired;
    if (++holders_[lane.key] > 1) ++tally_.violations;
    if (raw({"GET", keys_[lane.key]}).str != lane.mutex->value()) ++tally_.misrouted;
    // Held for a turn of the loop, so that others' requests and cancellations come meanwhile.
    asio::post(io_, [this, &lane] {
      --holders_[lane.key];
      lane.mutex->async_unlock([this, &lane](std::error_code unlock_error) {
        if (unlock_error) {
          ++tally_.unlock_errors;
          if (tally_.first_error.empty()) tally_.first_error = "unlock: " + unlock_error.message();
        }
        next(lane);
      });
    });
  }

  asio::io_context& io_;
  std::vector<std::string> keys_;
  std::vector<int> holders_;
  std::vector<Lane> lanes_;
  std::mt19937 random_{20261126};  // fixed: a failure can be run again as it was
  Tally tally_;
  int finished_ = 0;
};

TEST(AsyncCancelSoak, TenThousandAcquiresCancelledAtRandomPointsLeaveNothingHeldAndNoReplyMisrouted) {
  asio::io_context io;
  {
    AsyncClient client(io.get_executor(), test_client());
    std::vector<std::string> keys;
    for (int k = 0; k < kKeys; ++k) keys.push_back(unique_key(std::to_string(k)));
    Soak soak(io, client, keys);
    soak.start();
    const auto give_up = Clock::now() + seconds(240);  // a bound, far above a run's time
    while (!soak.done() && Clock::now() < give_up) {
      io.run_for(milliseconds(20));
      io.restart();
    }
    ASSERT_TRUE(soak.done()) << "the soak did not end within its bound";
    const Tally& tally = soak.tally();
    EXPECT_EQ(tally.started, kOperations);
    EXPECT_EQ(tally.acquired + tally.cancelled + tally.other_errors, kOperations);
    EXPECT_EQ(tally.other_errors, 0) << tally.first_error;
    EXPECT_EQ(tally.unlock_errors, 0) << tally.first_error;
    EXPECT_EQ(tally.violations, 0);
    EXPECT_EQ(tally.misrouted, 0);
    EXPECT_EQ(tally.held_after_cancel, 0);
    // Both outcomes came often: the points of cancellation were reached.
    EXPECT_GT(tally.cancelled, kOperations / 10);
    EXPECT_GT(tally.acquired, kOperations / 10);
    // Cancelled waiters leave their queues, and wins undone are released, in the background.
    const auto left_over = [&] {
      for (const std::string& key : keys) {
        if (raw({"EXISTS", key}).integer != 0 || raw({"LLEN", detail::waiter_queue(key)}).integer != 0) return true;
      }
      return false;
    };
    const auto settle_by = Clock::now() + seconds(10);
    while (left_over() && Clock::now() < settle_by) {
      io.run_for(milliseconds(20));
      io.restart();
    }
    for (const std::string& key : keys) {
      EXPECT_EQ(raw({"EXISTS", key}).integer, 0) << key << " is still held";
      EXPECT_EQ(raw({"LLEN", detail::waiter_queue(key)}).integer, 0) << key << " still has waiters queued";
    }
  }
  io.restart();
  io.run_for(seconds(10));  // what the locks left to finish runs to its end before the io_context goes
}

}  // namespace
}  // namespace lockbridge::testing
