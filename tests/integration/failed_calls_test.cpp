// A call that fails changes nothing it should not, and says which key it is about: scripts check
// what can fail before they write (scripts.hpp), and a server that refuses what is not essential
// to a call (an announcement, SCRIPT LOAD) does not make the call fail. ACL users and keys of the
// wrong kind are made on the fixture's real server.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mutex>
#include <vector>

#include <future>

#include "lockbridge/multi_mutex.hpp"
#include "redis/connection.hpp"
#include "redis_test_support.hpp"
#include "strategies/companion_keys.hpp"

namespace lockbridge::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

MutexOptions fenced_options(WaitMode mode) {
  MutexOptions options = token_options();
  options.token.fencing = true;
  options.wait_mode = mode;
  options.acquire_timeout = std::chrono::milliseconds(0);
  return options;
}

// What the fence counter holds before the attempt, and the error the attempt must give.
struct BadCounter {
  std::string name;
  std::function<void(const std::string& counter)> make;
  Errc expected;
};

std::vector<BadCounter> bad_counters() {
  return {
      {"not_a_number",
       [](const std::string& counter) {
         raw({"SET", counter, "abc"});
       },
       Errc::bad_value},
      {"a_hash",
       [](const std::string& counter) {
         raw({"HSET", counter, "f", "1"});
       },
       Errc::wrong_type},
      {"at_int64_max",
       [](const std::string& counter) {
         raw({"SET", counter, "9223372036854775807"});
       },
       Errc::bad_value},
      // Lua's numbers are doubles: from 2^53 on, fences would come back rounded, and repeat.
      {"past_2_to_the_53",
       [](const std::string& counter) {
         raw({"SET", counter, "9007199254740991"});
       },
       Errc::bad_value},
      {"negative",
       [](const std::string& counter) {
         raw({"SET", counter, "-5"});
       },
       Errc::bad_value},
  };
}

TEST(FailedCalls, AFenceCounterRedisCannotIncrementFailsTheAcquireWithNoLockWritten) {
  for (const WaitMode mode : {WaitMode::notify, WaitMode::fair}) {
    for (const BadCounter& bad : bad_counters()) {
      SCOPED_TRACE(bad.name + (mode == WaitMode::fair ? " fair" : " notify"));
      const std::string key = unique_key(bad.name);
      const std::string counter = detail::fence_counter(key);
      bad.make(counter);
      const Reply before = raw({"DUMP", counter});
      Mutex mutex(test_client(), key, fenced_options(mode));
      const Error error = expect_error([&] { (void)mutex.try_lock(); });
      EXPECT_EQ(error.errc(), bad.expected) << error.what();
      EXPECT_THAT(error.what(), HasSubstr(detail::printable_key(counter))) << "the error names the counter";
      EXPECT_THAT(error.what(), HasSubstr("nothing was written"));
      EXPECT_EQ(raw({"EXISTS", key}).integer, 0) << "no orphan lock for a whole lease";
      EXPECT_EQ(raw({"DUMP", counter}).str, before.str) << "the counter is unchanged";
      EXPECT_FALSE(mutex.owns_lock());
      raw({"DEL", counter, detail::fair_queue(key), detail::fair_deadlines(key)});
    }
  }
}

TEST(FailedCalls, TheLastFenceACounterCanGiveExactlyIsGiven) {
  const std::string key = unique_key();
  raw({"SET", detail::fence_counter(key), "9007199254740990"});
  Mutex mutex(test_client(), key, fenced_options(WaitMode::notify));
  ASSERT_TRUE(mutex.try_lock());
  EXPECT_EQ(mutex.fence(), 9007199254740991ULL);
  mutex.unlock();
  raw({"DEL", detail::fence_counter(key)});
}

TEST(FailedCalls, AFenceCounterAnAclDeniesFailsTheAcquireWithNoLockWritten) {
  const AclUser user({"+@all", "-incr"});
  const std::string key = unique_key();
  Mutex mutex(Client(user.url()), key, fenced_options(WaitMode::notify));
  const Error error = expect_error([&] { (void)mutex.try_lock(); });
  EXPECT_EQ(error.errc(), Errc::server_reply) << error.what();
  EXPECT_THAT(error.what(), HasSubstr(detail::printable_key(detail::fence_counter(key))));
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

TEST(FailedCalls, AFairQueueKeyOfAnotherTypeFailsTheAttemptNamingItAndWritesNoLock) {
  const std::string key = unique_key();
  raw({"SET", detail::fair_queue(key), "not a list"});
  MutexOptions options = token_options();
  options.wait_mode = WaitMode::fair;
  options.acquire_timeout = std::chrono::milliseconds(0);
  Mutex mutex(test_client(), key, options);
  const Error error = expect_error([&] { (void)mutex.try_lock(); });
  EXPECT_EQ(error.errc(), Errc::wrong_type);
  EXPECT_THAT(error.what(), HasSubstr(detail::printable_key(detail::fair_queue(key))));
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
  raw({"DEL", detail::fair_queue(key)});
}

TEST(FailedCalls, AHolderWhoseFairQueueKeyWasOverwrittenStillReleases) {
  const std::string key = unique_key();
  MutexOptions options = token_options();
  options.wait_mode = WaitMode::fair;
  Mutex mutex(test_client(), key, options);
  ASSERT_TRUE(mutex.try_lock());
  raw({"SET", detail::fair_queue(key), "not a list"});
  mutex.unlock();
  EXPECT_FALSE(mutex.last_error()) << mutex.last_error().message();
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
  EXPECT_EQ(raw({"GET", detail::fair_queue(key)}).str, "not a list") << "left as it was";
  raw({"DEL", detail::fair_queue(key)});
}

TEST(FailedCalls, AMultiKeyLockNamesTheKeyOfAnotherType) {
  const std::string first = unique_key("{m}a");
  const std::string second = unique_key("{m}b");
  raw({"HSET", second, "f", "1"});
  MultiMutex lock(test_client(), {first, second}, token_options());
  const Error error = expect_error([&] { (void)lock.try_lock(); });
  EXPECT_EQ(error.errc(), Errc::wrong_type);
  EXPECT_THAT(error.what(), HasSubstr("lock key " + detail::printable_key(second) + " holds a hash"));
  EXPECT_EQ(raw({"EXISTS", first}).integer, 0);
  raw({"DEL", second});
}

// Every strategy whose release announces itself, each run by a user the server lets do `rules`.
// "multi" is a MultiMutex of two keys; the others are Mutex variants (variant_options).
class AclLimited : public ::testing::TestWithParam<std::string_view> {
 protected:
  // Takes the lock as `user`, extends it where the strategy can, and releases it: the release
  // must report success and leave the key gone.
  static void lock_extend_release(const AclUser& user) {
    const Client client(user.url());
    const std::string key = unique_key("{a}");
    if (GetParam() == "multi") {
      MultiMutex lock(client, {key, key + ":2"}, token_options());
      ASSERT_TRUE(lock.try_lock());
      lock.unlock();
      EXPECT_FALSE(lock.last_error()) << lock.last_error().message();
      EXPECT_EQ(raw({"EXISTS", key, key + ":2"}).integer, 0);
      return;
    }
    MutexOptions options = variant_options(GetParam());
    if (GetParam() == "token_fair" || GetParam() == "redisson_fair") {
      if (GetParam() == "token_fair") options = token_options();
      options.wait_mode = WaitMode::fair;
      options.acquire_timeout = std::chrono::milliseconds(0);
    }
    std::string release_error;
    Mutex mutex(client, key, options);
    mutex.on_release_error([&](const Error& error) { release_error = error.what(); });
    ASSERT_TRUE(mutex.try_lock());
    if (GetParam() != "legacy_faithful") {
      EXPECT_TRUE(mutex.extend(std::chrono::seconds(30)));
    }
    mutex.unlock();
    EXPECT_FALSE(mutex.last_error()) << release_error;
    EXPECT_EQ(raw({"EXISTS", key}).integer, 0) << "released";
  }
};

TEST_P(AclLimited, AReleaseWhoseAnnouncementTheServerDeniesStillReleases) {
  const AclUser user({"+@all", "-spublish", "-publish"});
  lock_extend_release(user);
}

TEST_P(AclLimited, LocksAreTakenExtendedAndReleasedWithoutScriptLoad) {
  const AclUser user({"+@all", "-script"});
  lock_extend_release(user);
}

INSTANTIATE_TEST_SUITE_P(Strategies, AclLimited,
                         ::testing::Values("token", "token_fair", "legacy_hardened", "legacy_faithful", "redisson",
                                           "redisson_fair", "multi"),
                         kVariantName);

// A release nobody hears (the releaser may not publish, or the waiter may not subscribe): the
// waiter still gets the lock, by its retry policy (notify) or its seat's heartbeat (fair).
TEST(AclDenied, AWaiterGetsTheLockAfterAReleaseItCannotHear) {
  for (const WaitMode mode : {WaitMode::notify, WaitMode::fair}) {
    for (const bool waiter_denied : {true, false}) {
      SCOPED_TRACE(std::string(to_string(mode)) +
                   (waiter_denied ? ", the waiter may not subscribe" : ", the holder may not publish"));
      const AclUser deaf({"+@all", "-ssubscribe", "-subscribe"});
      const AclUser mute({"+@all", "-spublish", "-publish"});
      const std::string key = unique_key();
      MutexOptions options = token_options();
      options.wait_mode = mode;
      Mutex holder(Client(waiter_denied ? unix_url() : mute.url()), key, options);
      ASSERT_TRUE(holder.try_lock());
      const Client waiter_client(waiter_denied ? deaf.url() : unix_url());
      Mutex waiter(waiter_client, key, options);
      auto waited = std::async(std::launch::async, [&] { return waiter.try_lock_for(std::chrono::seconds(20)); });
      // Released only once the waiter has tried and is waiting: two attempts at least.
      ASSERT_TRUE(eventually([&] { return waiter_client.stats().round_trips >= 2; }));
      holder.unlock();
      EXPECT_FALSE(holder.last_error());
      EXPECT_TRUE(waited.get()) << "the lease is 60 s: the waiter must not wait for its end";
      waiter.unlock();
      EXPECT_FALSE(waiter.last_error());
    }
  }
}

// The waiter that may not subscribe falls back to polling, and says so once (ClientOptions::on_notice),
// whatever number of waits: a silent fallback hid why every wait took its retry policy's time.
TEST(AclDenied, AWaiterThatCannotSubscribeIsToldOnceAndStillGetsTheLock) {
  const AclUser deaf({"+@all", "-ssubscribe", "-subscribe"});
  std::mutex mutex;
  std::vector<std::string> notices;
  ClientOptions options;
  options.on_notice = [&](const std::string& notice) {
    const std::lock_guard lock(mutex);
    notices.push_back(notice);
  };
  const Client waiter_client(deaf.url(), options);
  for (int round = 0; round < 2; ++round) {
    const std::string key = unique_key();
    Mutex holder(test_client(), key, token_options());
    ASSERT_TRUE(holder.try_lock());
    Mutex waiter(waiter_client, key, token_options());
    auto waited = std::async(std::launch::async, [&] { return waiter.try_lock_for(std::chrono::seconds(20)); });
    ASSERT_TRUE(eventually([&] {
      const std::lock_guard lock(mutex);
      return !notices.empty();
    })) << "round "
        << round;
    // It polls by its backoff (at most 100 ms apart), queued or not: a waiter that counted on a
    // release message would try once per fair_waiter_timeout / 3 instead.
    const std::uint64_t before = waiter_client.stats().round_trips;
    EXPECT_TRUE(eventually([&] { return waiter_client.stats().round_trips >= before + 20; }, std::chrono::seconds(20)))
        << "round " << round;
    holder.unlock();
    EXPECT_TRUE(waited.get());
    waiter.unlock();
  }
  const std::lock_guard lock(mutex);
  ASSERT_EQ(notices.size(), 1U);
  EXPECT_THAT(notices.front(), HasSubstr("refused the subscription to release announcements (NOPERM"));
  EXPECT_THAT(notices.front(), HasSubstr("poll by their retry policy"));
}

TEST(AclDenied, AScriptTheServerDeniesIsAServerReplyErrorWithItsReasonNotAProtocolError) {
  const AclUser user({"+@all", "-evalsha", "-eval"});
  const std::string key = unique_key();
  MutexOptions options = hardened_options();  // every hardened acquire is a script
  options.acquire_timeout = std::chrono::milliseconds(0);
  Mutex mutex(Client(user.url()), key, options);
  const Error error = expect_error([&] { (void)mutex.try_lock(); });
  EXPECT_EQ(error.errc(), Errc::server_reply) << error.what();
  EXPECT_THAT(error.what(), HasSubstr("NOPERM"));
  EXPECT_THAT(error.what(), HasSubstr(detail::printable_key(key)));
  EXPECT_THAT(error.what(), Not(HasSubstr("acl-test-password")));
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

}  // namespace
}  // namespace lockbridge::testing
