// The waiting machinery without Redis: retry schedules, the local line, companion key names.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>

#include "cluster/key_slot.hpp"
#include "strategies/companion_keys.hpp"
#include "waiting/local_line.hpp"
#include "waiting/retry_schedule.hpp"

namespace lockbridge::detail {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

TEST(RetrySchedule, JedisLockCountsTimeoutOverResolutionPlusOneAttempts) {
  const auto start = Clock::now();
  RetrySchedule schedule(RetryPolicy::jedis_lock_resolution(milliseconds(100)), start, start + milliseconds(350));
  int retries = 0;
  while (schedule.next(start, std::nullopt)) ++retries;
  EXPECT_EQ(retries, 3);  // 4 attempts: 350 / 100 + 1
}

TEST(RetrySchedule, JedisLockKeepsTheLastAttemptWhenTheDeadlineWasSetJustBefore) {
  // try_lock_for(10000ms) sets its deadline a moment before the schedule starts: jedis-lock's
  // default still makes 10000 / 100 + 1 = 101 attempts.
  const auto deadline_set = Clock::now();
  const auto start = deadline_set + std::chrono::microseconds(20);
  RetrySchedule schedule(RetryPolicy::jedis_lock_resolution(milliseconds(100)), start,
                         deadline_set + milliseconds(10000));
  int retries = 0;
  while (schedule.next(start, std::nullopt)) ++retries;
  EXPECT_EQ(retries, 100);
}

TEST(RetrySchedule, FixedRetriesStopAfterTheCountAndAtTheDeadline) {
  const auto start = Clock::now();
  RetrySchedule counted(RetryPolicy::fixed_retries(10, milliseconds(2000)), start, Clock::time_point::max());
  int retries = 0;
  while (counted.next(start, std::nullopt)) ++retries;
  EXPECT_EQ(retries, 10);  // RedisLocker: 11 attempts
  RetrySchedule bounded(RetryPolicy::fixed_retries(10, milliseconds(2000)), start, start + milliseconds(500));
  const auto due = bounded.next(start, std::nullopt);
  ASSERT_TRUE(due.has_value());
  EXPECT_EQ(*due, start + milliseconds(500)) << "never past the deadline";
  EXPECT_FALSE(bounded.next(start + milliseconds(500), std::nullopt).has_value());
}

TEST(RetrySchedule, BackoffStaysWithinItsDoublingBoundTheCapAndTheHoldersLease) {
  const auto start = Clock::now();
  RetrySchedule schedule(RetryPolicy::backoff_with_jitter(milliseconds(2), milliseconds(50)), start,
                         Clock::time_point::max());
  for (int failure = 1; failure <= 12; ++failure) {
    const auto bound = std::min(milliseconds(2) * (1 << std::min(failure - 1, 10)), milliseconds(50));
    const auto due = schedule.next(start, std::nullopt);
    ASSERT_TRUE(due.has_value());
    EXPECT_LE(*due - start, bound) << "failure " << failure;
  }
  for (int i = 0; i < 20; ++i) {
    const auto due = schedule.next(start, milliseconds(3));
    ASSERT_TRUE(due.has_value());
    EXPECT_LE(*due - start, milliseconds(3)) << "never sleeps past the holder's lease end";
  }
}

TEST(LocalLine, ServesInArrivalOrder) {
  auto line = LocalLine::for_lock("unit-test:order");
  const auto now = Clock::now();
  auto first = std::make_unique<LocalLine::Place>(line);
  auto second = std::make_unique<LocalLine::Place>(line);
  LocalLine::Place third(line);
  EXPECT_TRUE(first->wait_for_turn(now));
  EXPECT_FALSE(second->wait_for_turn(now));
  EXPECT_FALSE(third.wait_for_turn(now));
  first.reset();  // served (or gave up): the next in line goes
  EXPECT_TRUE(second->wait_for_turn(now));
  EXPECT_FALSE(third.wait_for_turn(now));
  second.reset();
  EXPECT_TRUE(third.wait_for_turn(now));
}

TEST(LocalLine, AnEventDrivenPlaceIsToldWhenItsTurnComesAndWhenTheHoldHereEnds) {
  auto line = LocalLine::for_lock("unit-test:events");
  auto first = std::make_unique<LocalLine::Place>(line);
  LocalLine::Place second(line);
  int told = 0;
  second.on_change([&] { ++told; });
  EXPECT_FALSE(second.first_now());
  const std::uint64_t hold = line->held_here(Clock::now() + std::chrono::seconds(30));
  EXPECT_EQ(told, 0) << "a hold begun here is nothing to wake for";
  first.reset();
  EXPECT_EQ(told, 1);
  EXPECT_TRUE(second.first_now());
  ASSERT_TRUE(second.held_until_now().has_value());
  line->released_here(hold);
  EXPECT_EQ(told, 2);
  EXPECT_FALSE(second.held_until_now().has_value());
  second.on_change(nullptr);  // removed: told no more
  line->released_here(line->held_here(Clock::now() + std::chrono::seconds(30)));
  EXPECT_EQ(told, 2);
  EXPECT_EQ(line->waiting(), 1u);
}

TEST(LocalLine, OneLinePerLock) {
  EXPECT_EQ(LocalLine::for_lock("unit-test:same"), LocalLine::for_lock("unit-test:same"));
  EXPECT_NE(LocalLine::for_lock(std::string("unit-test/0\0b", 13)),
            LocalLine::for_lock(std::string("unit-test/0\0c", 13)));
}

TEST(CompanionKeys, ShareTheLockKeysHashSlot) {
  for (const std::string key : {"orders:42", "orders:{42}", "{a}b", "x{y", "a{}b{c}", "{}", "plain"}) {
    const std::string channel = release_channel(key);
    if (key.find('}') != std::string::npos && hashed_part(key).size() == key.size())
      continue;  // no same-slot name exists
    EXPECT_EQ(hashed_part(channel), hashed_part(key)) << key << " -> " << channel;
  }
  EXPECT_EQ(release_channel("orders:42"), "{orders:42}:lockbridge:released");
  EXPECT_EQ(release_channel("orders:{42}"), "orders:{42}:lockbridge:released");
  EXPECT_EQ(hashed_part("a{}b{c}"), "a{}b{c}") << "an empty first tag means the whole key";
}

}  // namespace
}  // namespace lockbridge::detail
