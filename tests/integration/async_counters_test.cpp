// AsyncLatch, AsyncSemaphore and AsyncLeasedSemaphore: Redisson's RCountDownLatch, RSemaphore and
// RPermitExpirableSemaphore through the async front (EventLatch, EventSemaphore and
// EventLeasedSemaphore under them), on the fixture's redis-server, beside the blocking
// front and a Java peer played by Redisson 4.7.0's own scripts. Waiters recheck only once a minute,
// so a wake-up by announcement that did not come fails the test; nothing asserts a duration.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <asio/bind_cancellation_slot.hpp>
#include <asio/cancellation_signal.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "lockbridge/asio.hpp"
#include "lockbridge/latch.hpp"
#include "lockbridge/leased_semaphore.hpp"
#include "lockbridge/semaphore.hpp"
#include "loop_runner.hpp"
#include "redis_test_support.hpp"
#include "redisson_peer.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

// An outcome the loop sets once.
template <class... Values>
using Outcome = std::optional<std::tuple<std::error_code, Values...>>;

class AsyncCountersTest : public ::testing::Test {
 protected:
  // Runs the loop until `outcome` is set: whether it was within the bound.
  template <class Value>
  bool settled(const Value& outcome) {
    return runner_.run_until([&] { return outcome.has_value(); });
  }
  // The value of an operation that completes with (error, value), which the test expects to succeed.
  template <class T, class Start>
  T value_of(Start start) {
    Outcome<T> outcome;
    start([&](std::error_code error, T value) { outcome.emplace(error, value); });
    EXPECT_TRUE(settled(outcome));
    if (!outcome) return T{};
    EXPECT_FALSE(std::get<0>(*outcome)) << std::get<0>(*outcome).message();
    return std::get<1>(*outcome);
  }
  // The error an operation completes with.
  template <class Start>
  std::error_code error_of(Start start) {
    std::optional<std::error_code> outcome;
    start([&](std::error_code error, auto...) { outcome = error; });
    EXPECT_TRUE(settled(outcome));
    return outcome.value_or(make_error_code(Errc::timeout));
  }
  // Whether anyone in this process listens on `channel` (one subscription serves every waiter).
  bool subscribed(const std::string& channel) {
    return runner_.run_until([&] {
      const Reply counted = raw({"PUBSUB", "NUMSUB", channel});
      return counted.elements.size() == 2 && counted.elements[1].integer == 1;
    });
  }

  void TearDown() override { runner_.drain(); }

  LoopRunner runner_;
  AsyncClient client_{runner_.io().get_executor(), test_client()};
};

LatchOptions message_only_latch() {
  LatchOptions options;
  options.recheck = minutes(1);
  return options;
}

SemaphoreOptions message_only_semaphore() {
  SemaphoreOptions options;
  options.recheck = minutes(1);
  options.acquire_timeout = seconds(50);
  return options;
}

TEST_F(AsyncCountersTest, LatchWaitersOfEveryKindWakeOnTheLastCountDownWithNoThreadWaiting) {
  const std::string key = unique_key();
  AsyncLatch latch(client_, key, message_only_latch());
  EXPECT_TRUE(value_of<bool>([&](auto done) { latch.async_try_set_count(2, done); }));
  EXPECT_FALSE(value_of<bool>([&](auto done) { latch.async_try_set_count(5, done); })) << "a count was there";
  EXPECT_EQ(value_of<std::int64_t>([&](auto done) { latch.async_count(done); }), 2);

  std::vector<std::optional<std::error_code>> woken(3);
  for (auto& each : woken) latch.async_wait([&each](std::error_code error) { each = error; });
  Outcome<bool> bounded;
  latch.async_wait_for(minutes(5), [&](std::error_code error, bool open) { bounded.emplace(error, open); });
  ASSERT_TRUE(subscribed(Latch::channel_name(key)));

  Latch(test_client(), key).count_down();  // the blocking front's
  runner_.io().restart();
  runner_.io().poll();
  EXPECT_FALSE(woken[0].has_value()) << "woken with the count at 1";
  EXPECT_TRUE(raw(redisson_latch_count_down_command(key)).is_nil());  // Java's, the last
  ASSERT_TRUE(runner_.run_until([&] {
    return bounded.has_value() &&
           std::all_of(woken.begin(), woken.end(), [](const auto& each) { return each.has_value(); });
  })) << "the Java count-down did not wake every waiter";
  for (const auto& each : woken) EXPECT_FALSE(*each);
  EXPECT_EQ(*bounded, std::make_tuple(std::error_code(), true));
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
  EXPECT_EQ(error_of([&](auto done) { latch.async_count_down(done); }), std::error_code()) << "an open latch";
}

TEST_F(AsyncCountersTest, ALatchWaitEndsAtItsDeadlineOrAtOnceWhenCancelled) {
  const std::string key = unique_key();
  AsyncLatch latch(client_, key, message_only_latch());
  ASSERT_TRUE(value_of<bool>([&](auto done) { latch.async_try_set_count(1, done); }));
  EXPECT_FALSE(value_of<bool>([&](auto done) { latch.async_wait_for(std::chrono::milliseconds(1), done); }));

  asio::cancellation_signal cancel;
  std::optional<std::error_code> cancelled;
  latch.async_wait(asio::bind_cancellation_slot(cancel.slot(), [&](std::error_code error) { cancelled = error; }));
  ASSERT_TRUE(subscribed(Latch::channel_name(key)));
  cancel.emit(asio::cancellation_type::terminal);
  ASSERT_TRUE(settled(cancelled));
  EXPECT_EQ(*cancelled, asio::error::operation_aborted);
  EXPECT_EQ(raw({"GET", key}).str, "1") << "a wait changed the latch";
}

TEST_F(AsyncCountersTest, ALatchsBadInputIsAnErrorCodeAndChangesNoKey) {
  const std::string key = unique_key();
  AsyncLatch latch(client_, key);
  EXPECT_EQ(error_of([&](auto done) { latch.async_try_set_count(0, done); }), make_error_code(Errc::bad_option));
  raw({"SET", key, "not a count"});
  EXPECT_EQ(error_of([&](auto done) { latch.async_count(done); }), make_error_code(Errc::bad_value));
  EXPECT_EQ(error_of([&](auto done) { latch.async_wait_for(seconds(5), done); }), make_error_code(Errc::bad_value));
  EXPECT_EQ(raw({"GET", key}).str, "not a count");
  const std::string hash = unique_key();
  raw({"HSET", hash, "f", "v"});
  AsyncLatch wrong(client_, hash);
  EXPECT_EQ(error_of([&](auto done) { wrong.async_count_down(done); }), make_error_code(Errc::wrong_type));
  EXPECT_EQ(raw({"HGET", hash, "f"}).str, "v");
  EXPECT_THROW(AsyncLatch(client_, ""), Error);
}

TEST_F(AsyncCountersTest, AnAcquireWaitsForAJavaReleaseWithNoThreadWaiting) {
  const std::string key = unique_key();
  AsyncSemaphore slots(client_, key, message_only_semaphore());
  ASSERT_TRUE(value_of<bool>([&](auto done) { slots.async_try_set_permits(2, done); }));
  EXPECT_EQ(error_of([&](auto done) { slots.async_acquire(1, done); }), std::error_code());
  ASSERT_EQ(raw(redisson_semaphore_acquire_command(key)).integer, 1) << "Java takes the other permit";
  EXPECT_FALSE(value_of<bool>([&](auto done) { slots.async_try_acquire(1, done); }));

  Outcome<bool> waited;
  slots.async_try_acquire_for(minutes(5), 1, [&](std::error_code error, bool taken) { waited.emplace(error, taken); });
  ASSERT_TRUE(subscribed(Semaphore::channel_name(key)));
  EXPECT_FALSE(waited.has_value());
  EXPECT_TRUE(raw(redisson_semaphore_release_command(key)).is_nil());
  ASSERT_TRUE(settled(waited)) << "the Java release did not wake it";
  EXPECT_EQ(*waited, std::make_tuple(std::error_code(), true));
  EXPECT_EQ(value_of<std::int64_t>([&](auto done) { slots.async_available(done); }), 0);

  EXPECT_EQ(error_of([&](auto done) { slots.async_release(2, done); }), std::error_code());
  EXPECT_EQ(value_of<std::int64_t>([&](auto done) { slots.async_add_permits(3, done); }), 5);
  EXPECT_EQ(value_of<std::int64_t>([&](auto done) { slots.async_drain(done); }), 5);
  EXPECT_EQ(Semaphore(test_client(), key).available(), 0);
}

TEST_F(AsyncCountersTest, AnAcquireThatGaveUpOrWasCancelledKeepsNoPermit) {
  const std::string key = unique_key();
  SemaphoreOptions options = message_only_semaphore();
  options.acquire_timeout = std::chrono::milliseconds(1);
  AsyncSemaphore slots(client_, key, options);
  EXPECT_EQ(error_of([&](auto done) { slots.async_acquire(1, done); }), make_error_code(Errc::timeout));

  // Cancelled while it waits.
  asio::cancellation_signal cancel;
  std::optional<std::error_code> cancelled;
  slots.async_try_acquire_for(
      minutes(5), 1,
      asio::bind_cancellation_slot(cancel.slot(), [&](std::error_code error, bool) { cancelled = error; }));
  ASSERT_TRUE(subscribed(Semaphore::channel_name(key)));
  cancel.emit(asio::cancellation_type::terminal);
  ASSERT_TRUE(settled(cancelled));
  EXPECT_EQ(*cancelled, asio::error::operation_aborted);

  // Cancelled after its attempt was sent, which wins the permit: it gives the permit back.
  ASSERT_TRUE(Semaphore(test_client(), key).try_set_permits(1));
  std::stop_source stop;
  Outcome<bool> won_then_cancelled;
  EventSemaphore engine(client_.engine(), key, message_only_semaphore());
  engine.acquire(1, EventSemaphore::Clock::time_point::max(), stop.get_token(),
                 [&](std::error_code error, bool taken) { won_then_cancelled.emplace(error, taken); });
  stop.request_stop();
  ASSERT_TRUE(settled(won_then_cancelled));
  EXPECT_EQ(std::get<0>(*won_then_cancelled), std::errc::operation_canceled);
  EXPECT_EQ(raw({"GET", key}).str, "1") << "the cancelled acquire kept its permit";
}

TEST_F(AsyncCountersTest, DestroyingASemaphoreGivesBackWhatItsRunningAcquireWonAndTellsNobody) {
  const std::string key = unique_key();
  ASSERT_TRUE(Semaphore(test_client(), key).try_set_permits(1));
  bool told = false;
  {
    AsyncSemaphore slots(client_, key, message_only_semaphore());
    slots.async_acquire(1, [&](std::error_code) { told = true; });  // its attempt is on its way
  }
  runner_.drain();
  EXPECT_FALSE(told);
  EXPECT_EQ(raw({"GET", key}).str, "1") << "the permit won as the semaphore went was kept";
}

TEST_F(AsyncCountersTest, ASemaphoresBadInputIsAnErrorCodeAndChangesNoKey) {
  const std::string key = unique_key();
  AsyncSemaphore slots(client_, key);
  for (const std::int64_t bad : {std::int64_t{0}, std::int64_t{-1}, std::int64_t{1} << 31}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(error_of([&](auto done) { slots.async_try_acquire(bad, done); }), make_error_code(Errc::bad_option));
    EXPECT_EQ(error_of([&](auto done) { slots.async_acquire(bad, done); }), make_error_code(Errc::bad_option));
    EXPECT_EQ(error_of([&](auto done) { slots.async_release(bad, done); }), make_error_code(Errc::bad_option));
  }
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
  raw({"RPUSH", key, "x"});
  EXPECT_EQ(error_of([&](auto done) { slots.async_release(1, done); }), make_error_code(Errc::wrong_type));
  EXPECT_EQ(error_of([&](auto done) { slots.async_available(done); }), make_error_code(Errc::wrong_type));
  EXPECT_EQ(raw({"LRANGE", key, "0", "-1"}).elements.size(), 1u);
}

LeasedSemaphoreOptions message_only_leased() {
  LeasedSemaphoreOptions options;
  options.recheck = minutes(1);
  options.acquire_timeout = seconds(50);
  return options;
}

TEST_F(AsyncCountersTest, ALeasedPermitIsTakenWaitedForAndGivenBackWithNoThreadWaiting) {
  const std::string key = unique_key();
  AsyncLeasedSemaphore workers(client_, key, message_only_leased());
  ASSERT_TRUE(value_of<bool>([&](auto done) { workers.async_try_set_permits(1, done); }));
  const std::string permit = value_of<std::string>([&](auto done) { workers.async_acquire(seconds(30), done); });
  ASSERT_EQ(permit.size(), 32u);
  EXPECT_EQ(raw({"ZCARD", LeasedSemaphore::leases_name(key)}).integer, 1);
  EXPECT_FALSE(LeasedSemaphore(test_client(), key).try_acquire(seconds(30)))
      << "the blocking front took a taken permit";
  EXPECT_EQ(value_of<std::string>([&](auto done) { workers.async_try_acquire(seconds(30), done); }), "");
  EXPECT_TRUE(value_of<bool>([&](auto done) { workers.async_update_lease(permit, minutes(5), done); }));

  Outcome<std::string> waited;
  workers.async_try_acquire_for(minutes(5), LeasedSemaphore::kNoLease,
                                [&](std::error_code error, std::string next) { waited.emplace(error, next); });
  ASSERT_TRUE(subscribed(Semaphore::channel_name(key)));
  EXPECT_TRUE(LeasedSemaphore(test_client(), key).release(permit)) << "the blocking front's release";
  ASSERT_TRUE(settled(waited)) << "the release did not wake the async waiter";
  EXPECT_FALSE(std::get<0>(*waited));
  const std::string next = std::get<1>(*waited);
  EXPECT_EQ(next.size(), 32u);
  EXPECT_TRUE(value_of<bool>([&](auto done) { workers.async_release(next, done); }));
  EXPECT_FALSE(value_of<bool>([&](auto done) { workers.async_release(next, done); })) << "released twice";
  EXPECT_EQ(value_of<std::int64_t>([&](auto done) { workers.async_available(done); }), 1);
  EXPECT_EQ(error_of([&](auto done) { workers.async_release("not an id", done); }), make_error_code(Errc::bad_option));
  EXPECT_EQ(error_of([&](auto done) { workers.async_acquire(std::chrono::milliseconds(0), done); }),
            make_error_code(Errc::bad_option));
}

TEST_F(AsyncCountersTest, ManyLeasedPermitsAreTakenWaitedForAndGivenBackTogether) {
  const std::string key = unique_key();
  AsyncLeasedSemaphore workers(client_, key, message_only_leased());
  ASSERT_TRUE(value_of<bool>([&](auto done) { workers.async_try_set_permits(3, done); }));
  using Permits = std::vector<std::string>;
  const Permits two = value_of<Permits>([&](auto done) { workers.async_acquire(2, seconds(30), done); });
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(raw({"ZCARD", LeasedSemaphore::leases_name(key)}).integer, 2);
  EXPECT_TRUE(value_of<Permits>([&](auto done) { workers.async_try_acquire(2, seconds(30), done); }).empty());

  Outcome<Permits> waited;
  workers.async_try_acquire_for(minutes(5), 3, LeasedSemaphore::kNoLease,
                                [&](std::error_code error, Permits taken) { waited.emplace(error, taken); });
  ASSERT_TRUE(subscribed(Semaphore::channel_name(key)));
  EXPECT_EQ(LeasedSemaphore(test_client(), key).release(two), 2) << "the blocking front's release";
  ASSERT_TRUE(settled(waited)) << "the release did not wake the async waiter for three";
  EXPECT_FALSE(std::get<0>(*waited));
  const Permits three = std::get<1>(*waited);
  EXPECT_EQ(three.size(), 3u);
  EXPECT_EQ(value_of<std::int64_t>([&](auto done) { workers.async_release(three, done); }), 3);
  EXPECT_EQ(value_of<std::int64_t>([&](auto done) { workers.async_release(three, done); }), 0) << "released twice";
  EXPECT_EQ(value_of<std::int64_t>([&](auto done) { workers.async_available(done); }), 3);
  EXPECT_EQ(error_of([&](auto done) { workers.async_release(Permits{"not an id"}, done); }),
            make_error_code(Errc::bad_option));
  EXPECT_EQ(error_of([&](auto done) { workers.async_acquire(0, seconds(1), done); }),
            make_error_code(Errc::bad_option));
}

TEST_F(AsyncCountersTest, ALeasedAcquireCancelledAfterItsAttemptWonGivesThePermitBack) {
  const std::string key = unique_key();
  ASSERT_TRUE(LeasedSemaphore(test_client(), key).try_set_permits(1));
  EventLeasedSemaphore engine(client_.engine(), key, message_only_leased());
  std::stop_source stop;
  Outcome<std::string> cancelled;
  engine.acquire(LeasedSemaphore::kNoLease, EventLeasedSemaphore::Clock::time_point::max(), stop.get_token(),
                 [&](std::error_code error, std::string permit) { cancelled.emplace(error, permit); });
  stop.request_stop();  // the attempt is on its way, and wins
  ASSERT_TRUE(settled(cancelled));
  EXPECT_EQ(std::get<0>(*cancelled), std::errc::operation_canceled);
  EXPECT_EQ(raw({"GET", key}).str, "1") << "the cancelled acquire kept its permit";
  EXPECT_EQ(raw({"ZCARD", LeasedSemaphore::leases_name(key)}).integer, 0);
}

TEST_F(AsyncCountersTest, ALeasedAcquireOfManyCancelledAfterItsAttemptWonGivesThemAllBack) {
  const std::string key = unique_key();
  ASSERT_TRUE(LeasedSemaphore(test_client(), key).try_set_permits(3));
  EventLeasedSemaphore engine(client_.engine(), key, message_only_leased());
  std::stop_source stop;
  Outcome<std::vector<std::string>> cancelled;
  engine.acquire(3, LeasedSemaphore::kNoLease, EventLeasedSemaphore::Clock::time_point::max(), stop.get_token(),
                 [&](std::error_code error, std::vector<std::string> permits) { cancelled.emplace(error, permits); });
  stop.request_stop();  // the attempt is on its way, and wins
  ASSERT_TRUE(settled(cancelled));
  EXPECT_EQ(std::get<0>(*cancelled), std::errc::operation_canceled);
  EXPECT_EQ(raw({"GET", key}).str, "3") << "the cancelled acquire kept permits";
  EXPECT_EQ(raw({"ZCARD", LeasedSemaphore::leases_name(key)}).integer, 0);
}

}  // namespace
}  // namespace lockbridge::testing
