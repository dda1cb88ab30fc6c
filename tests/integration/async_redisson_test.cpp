// Redisson's fair lock (RFairLock) and fenced lock (RFencedLock) through the async front
// (AsyncMutex on the redisson strategy), beside a Java peer played by Redisson 4.7.0's own
// scripts: an async fair waiter queues behind a Java holder and is woken on its own channel by the
// Java release, and each async acquisition draws the next token from the counter Java draws from.
// Waiters poll only once a minute, so a wake-up that did not come fails the test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <system_error>

#include "lockbridge/asio.hpp"
#include "loop_runner.hpp"
#include "redis_test_support.hpp"
#include "redisson_peer.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::seconds;

constexpr char kJavaHolder[] = "8b0c2a1e-0000-4000-8000-0000000000a1:1";

class AsyncRedissonLocks : public ::testing::Test {
 protected:
  // One attempt: whether it took the lock.
  bool try_lock(AsyncMutex& mutex) {
    std::optional<std::pair<std::error_code, bool>> outcome;
    mutex.async_try_lock([&](std::error_code error, bool acquired) { outcome.emplace(error, acquired); });
    EXPECT_TRUE(runner_.run_until([&] { return outcome.has_value(); }));
    EXPECT_FALSE(outcome && outcome->first) << outcome->first.message();
    return outcome && outcome->second;
  }
  void unlock(AsyncMutex& mutex) {
    std::optional<std::error_code> released;
    mutex.async_unlock([&](std::error_code error) { released = error; });
    ASSERT_TRUE(runner_.run_until([&] { return released.has_value(); }));
    EXPECT_FALSE(*released) << released->message();
  }

  void TearDown() override { runner_.drain(); }

  LoopRunner runner_;
  AsyncClient client_{runner_.io().get_executor(), test_client()};
};

TEST_F(AsyncRedissonLocks, AFairWaiterQueuesBehindJavaAndIsWokenOnItsOwnChannel) {
  const std::string key = unique_key();
  ASSERT_TRUE(raw(redisson_fair_lock_command(key, kJavaHolder, "300000")).is_nil()) << "the Java holder";
  MutexOptions options = minute_poll_waiter(MutexOptions::redisson_lock());
  options.wait_mode = WaitMode::fair;
  AsyncMutex waiter(client_, key, options);
  std::optional<std::error_code> locked;
  waiter.async_lock([&](std::error_code error) { locked = error; });
  ASSERT_TRUE(runner_.run_until([&] { return raw({"LLEN", redisson_fair_queue(key)}).integer == 1; }))
      << "the async waiter never queued";
  const std::string field = raw({"LINDEX", redisson_fair_queue(key), "0"}).str;
  ASSERT_TRUE(runner_.run_until([&] {
    const Reply counted = raw({"PUBSUB", "NUMSUB", redisson_fair_channel(key, field)});
    return counted.elements.size() == 2 && counted.elements[1].integer == 1;
  })) << "the async waiter did not subscribe to its own channel";
  EXPECT_FALSE(locked.has_value());
  EXPECT_EQ(raw(redisson_fair_unlock_command(key, kJavaHolder)).integer, 1);
  ASSERT_TRUE(runner_.run_until([&] { return locked.has_value(); })) << "the Java release did not wake it";
  EXPECT_FALSE(*locked) << locked->message();
  EXPECT_EQ(waiter.value(), field);
  EXPECT_EQ(raw({"LLEN", redisson_fair_queue(key)}).integer, 0);
  unlock(waiter);
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

TEST_F(AsyncRedissonLocks, EachAcquisitionDrawsTheNextTokenFromTheCounterJavaDrawsFrom) {
  const std::string key = unique_key();
  MutexOptions options = MutexOptions::redisson_lock();
  options.token.fencing = true;
  AsyncMutex mutex(client_, key, options);
  ASSERT_TRUE(try_lock(mutex));
  ASSERT_TRUE(mutex.fence().has_value());
  const std::uint64_t first = *mutex.fence();
  EXPECT_EQ(raw({"GET", redisson_token_counter(key)}).str, std::to_string(first));
  unlock(mutex);
  const Reply java = raw(redisson_fenced_lock_command(key, kJavaHolder));
  ASSERT_EQ(java.elements.size(), 2U);
  EXPECT_EQ(java.elements[1].integer, static_cast<long long>(first + 1));
  EXPECT_FALSE(try_lock(mutex));
  EXPECT_EQ(raw(redisson_unlock_command(key, kJavaHolder)).integer, 1);
  ASSERT_TRUE(try_lock(mutex));
  EXPECT_EQ(mutex.fence(), first + 2);
  unlock(mutex);
}

}  // namespace
}  // namespace lockbridge::testing
