// MultiMutex against the fixture's redis-server: all keys or none, owner-checked release, waiting
// for the key that blocks, and the refusals. Assertions are about outcomes, never timings; where a
// wait must be bounded, the bound is far below what polling would need (a 60 s retry interval).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "lockbridge/multi_mutex.hpp"
#include "redis_test_support.hpp"
#include "strategies/companion_keys.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Keys sharing one hash tag, as Redis Cluster would require: "{<unique>}:a", "{<unique>}:b", ...
std::vector<std::string> tagged_keys(std::initializer_list<std::string_view> names) {
  const std::string tag = "{" + unique_key() + "}:";
  std::vector<std::string> keys;
  for (const auto name : names) keys.push_back(tag + std::string(name));
  return keys;
}

bool exists(const std::string& key) { return raw({"EXISTS", key}).integer == 1; }

// A waiter that only a release message can bring in early: the policy's next attempt is 60 s away.
MutexOptions notify_waiter() {
  MutexOptions options = token_options();
  options.wait_mode = WaitMode::notify;
  options.retry = RetryPolicy::fixed_retries(5, seconds(60));
  options.acquire_timeout = seconds(50);
  options.local_queue = false;
  return options;
}

MutexOptions single_holder() {
  MutexOptions options = token_options();
  options.local_queue = false;  // stands for another process
  return options;
}

// How many subscribers the release channel of `key` has (each Client's notifier counts once).
std::int64_t release_subscribers(const std::string& key) {
  const Reply reply = raw({"PUBSUB", "SHARDNUMSUB", detail::release_channel(key)});
  return reply.elements.size() == 2 ? reply.elements[1].integer : -1;
}

TEST(MultiMutex, AcquiresEveryKeyWithOneTokenAndTheLease) {
  const auto keys = tagged_keys({"a", "b", "c"});
  MultiMutex multi(test_client(), keys, token_options());
  ASSERT_TRUE(multi.try_lock());
  EXPECT_TRUE(multi.owns_lock());
  EXPECT_GT(multi.valid_for(), milliseconds::zero());
  EXPECT_EQ(multi.value().size(), 32U);
  for (const auto& key : keys) {
    SCOPED_TRACE(key);
    EXPECT_EQ(raw({"GET", key}).str, multi.value());
    const auto pttl = raw({"PTTL", key}).integer;
    EXPECT_GT(pttl, 0);
    EXPECT_LE(pttl, multi.options().lease.count());
  }
  multi.unlock();
  EXPECT_FALSE(multi.owns_lock());
  EXPECT_FALSE(multi.last_error());
  for (const auto& key : keys) EXPECT_FALSE(exists(key)) << key;
}

TEST(MultiMutex, OneHeldKeyBlocksAllAndNothingIsWritten) {
  const auto keys = tagged_keys({"a", "b", "c"});
  Mutex holder(test_client(), keys[1], single_holder());
  ASSERT_TRUE(holder.try_lock());
  MultiMutex multi(test_client(), keys, token_options());
  EXPECT_FALSE(multi.try_lock());
  EXPECT_FALSE(multi.owns_lock());
  EXPECT_FALSE(exists(keys[0]));
  EXPECT_FALSE(exists(keys[2]));
  EXPECT_EQ(raw({"GET", keys[1]}).str, holder.value());
  holder.unlock();
  EXPECT_TRUE(multi.try_lock());
}

TEST(MultiMutex, UnlockDeletesOnlyKeysStillHoldingOurToken) {
  const auto keys = tagged_keys({"a", "b", "c"});
  MultiMutex multi(test_client(), keys, token_options());
  ASSERT_TRUE(multi.try_lock());
  raw({"DEL", keys[0]});             // its TTL ran out behind our back
  raw({"SET", keys[1], "foreign"});  // taken over by someone else
  multi.unlock();
  EXPECT_EQ(multi.last_error(), make_error_code(Errc::lease_lost));
  EXPECT_EQ(raw({"GET", keys[1]}).str, "foreign") << "someone else's lock must survive our release";
  EXPECT_FALSE(exists(keys[2])) << "the key still ours is released";
  EXPECT_FALSE(multi.owns_lock());
}

TEST(MultiMutex, AForeignKeyOfAnotherTypeDoesNotStopTheReleaseOfTheOthers) {
  const auto keys = tagged_keys({"a", "b"});
  MultiMutex multi(test_client(), keys, token_options());
  ASSERT_TRUE(multi.try_lock());
  raw({"DEL", keys[0]});
  raw({"HSET", keys[0], "field", "value"});
  multi.unlock();
  EXPECT_EQ(multi.last_error(), make_error_code(Errc::lease_lost));
  EXPECT_EQ(raw({"TYPE", keys[0]}).str, "hash");
  EXPECT_FALSE(exists(keys[1]));
}

TEST(MultiMutex, AWaiterGetsAllKeysRightAfterTheBlockingMutexUnlocks) {
  const auto keys = tagged_keys({"a", "b", "c"});
  Client holder_client = test_client();
  Client waiter_client = test_client();
  Mutex holder(holder_client, keys[1], single_holder());
  ASSERT_TRUE(holder.try_lock());
  MultiMutex waiter(waiter_client, keys, notify_waiter());
  auto waited = std::async(std::launch::async, [&waiter] { waiter.lock(); });
  // The waiter has failed once and listens on the blocking key's channel.
  EXPECT_TRUE(eventually([&] { return release_subscribers(keys[1]) == 1; }));
  EXPECT_EQ(waited.wait_for(milliseconds(200)), std::future_status::timeout) << "it must wait while a key is held";
  EXPECT_FALSE(exists(keys[0])) << "a waiter holds nothing while it waits";
  holder.unlock();
  // Polling would take 60 s; the release message brings it in at once. 30 s bounds a broken test.
  ASSERT_EQ(waited.wait_for(seconds(30)), std::future_status::ready) << "the release did not wake the waiter";
  waited.get();
  ASSERT_TRUE(waiter.owns_lock());
  for (const auto& key : keys) EXPECT_EQ(raw({"GET", key}).str, waiter.value()) << key;
  waiter.unlock();
  EXPECT_FALSE(waiter.last_error());
}

TEST(MultiMutex, AWaiterFollowsTheBlockingKeyWhenItChanges) {
  // a is released first: the waiter then finds b blocking and must listen on b's channel instead.
  const auto keys = tagged_keys({"a", "b"});
  Client waiter_client = test_client();
  Mutex holder_a(test_client(), keys[0], single_holder());
  Mutex holder_b(test_client(), keys[1], single_holder());
  ASSERT_TRUE(holder_a.try_lock());
  ASSERT_TRUE(holder_b.try_lock());
  MultiMutex waiter(waiter_client, keys, notify_waiter());
  auto waited = std::async(std::launch::async, [&waiter] { waiter.lock(); });
  EXPECT_TRUE(eventually([&] { return release_subscribers(keys[0]) == 1; }));
  EXPECT_EQ(release_subscribers(keys[1]), 0);
  holder_a.unlock();
  // Woken by a's release, the next attempt fails on b: the waiter now listens on b's channel.
  EXPECT_TRUE(eventually([&] { return release_subscribers(keys[1]) == 1; }));
  EXPECT_EQ(waited.wait_for(milliseconds(200)), std::future_status::timeout) << "b is still held";
  holder_b.unlock();
  ASSERT_EQ(waited.wait_for(seconds(30)), std::future_status::ready) << "b's release did not wake the waiter";
  waited.get();
  EXPECT_TRUE(waiter.owns_lock());
}

TEST(MultiMutex, LockThrowsTimeoutWhenAKeyStaysHeld) {
  const auto keys = tagged_keys({"a", "b"});
  Mutex holder(test_client(), keys[0], single_holder());
  ASSERT_TRUE(holder.try_lock());
  MutexOptions options = token_options();
  options.acquire_timeout = milliseconds(0);
  MultiMutex multi(test_client(), keys, options);
  EXPECT_EQ(expect_error([&] { multi.lock(); }).errc(), Errc::timeout);
  EXPECT_FALSE(exists(keys[1]));
}

TEST(MultiMutex, WorksWithUniqueLock) {
  const auto keys = tagged_keys({"a", "b"});
  MultiMutex multi(test_client(), keys, token_options());
  {
    std::unique_lock guard(multi);
    EXPECT_TRUE(multi.owns_lock());
    EXPECT_EQ(expect_error([&] { (void)multi.try_lock(); }).errc(), Errc::bad_option) << "locking twice is a bug";
  }
  EXPECT_FALSE(multi.owns_lock());
  EXPECT_FALSE(exists(keys[0]));
  EXPECT_TRUE(multi.try_lock_for(seconds(10)));
}

TEST(MultiMutex, AKeyOfAnotherTypeIsWrongTypeAndNothingIsWritten) {
  const auto keys = tagged_keys({"a", "b", "c"});
  raw({"HSET", keys[1], "field", "value"});
  MultiMutex multi(test_client(), keys, token_options());
  const Error error = expect_error([&] { (void)multi.try_lock(); });
  EXPECT_EQ(error.errc(), Errc::wrong_type);
  EXPECT_THAT(error.what(), HasSubstr(keys[1]));
  EXPECT_THAT(error.what(), HasSubstr("hash"));
  EXPECT_FALSE(exists(keys[0]));
  EXPECT_FALSE(exists(keys[2]));
  EXPECT_FALSE(multi.owns_lock());
}

TEST(MultiMutex, AKeyOfAnotherTypeIsReportedEvenBehindAHeldKey) {
  // Waiting for a would be pointless: b never becomes a free string key by itself.
  const auto keys = tagged_keys({"a", "b"});
  Mutex holder(test_client(), keys[0], single_holder());
  ASSERT_TRUE(holder.try_lock());
  raw({"RPUSH", keys[1], "x"});
  MultiMutex multi(test_client(), keys, token_options());
  EXPECT_EQ(expect_error([&] { (void)multi.try_lock(); }).errc(), Errc::wrong_type);
}

TEST(MultiMutex, RefusesTheLegacyStrategy) {
  const Error error = expect_error([] { MultiMutex(test_client(), tagged_keys({"a", "b"}), hardened_options()); });
  EXPECT_EQ(error.errc(), Errc::bad_option);
  EXPECT_THAT(error.what(), HasSubstr("token strategy"));
}

TEST(MultiMutex, RefusesPerKeyFeaturesRatherThanIgnoringThem) {
  const auto refused = [](void (*change)(MutexOptions&)) {
    MutexOptions options = token_options();
    change(options);
    return expect_error([&] { MultiMutex(test_client(), {"a", "b"}, options); }).errc();
  };
  EXPECT_EQ(refused([](MutexOptions& o) { o.watchdog.enabled = true; }), Errc::bad_option);
  EXPECT_EQ(refused([](MutexOptions& o) { o.wait_mode = WaitMode::fair; }), Errc::bad_option);
  EXPECT_EQ(refused([](MutexOptions& o) { o.token.fencing = true; }), Errc::bad_option);
  EXPECT_EQ(refused([](MutexOptions& o) { o.reentrant = true; }), Errc::bad_option);
  EXPECT_EQ(refused([](MutexOptions& o) { o.replica_ack.replicas = 1; }), Errc::bad_option);
}

TEST(MultiMutex, RefusesAnEmptyKeyListOrAnEmptyKey) {
  EXPECT_EQ(expect_error([] { MultiMutex(test_client(), {}, token_options()); }).errc(), Errc::bad_option);
  EXPECT_EQ(expect_error([] { MultiMutex(test_client(), {"a", ""}, token_options()); }).errc(), Errc::bad_option);
}

TEST(MultiMutex, RemovesDuplicatesAndSortsTheKeys) {
  const auto keys = tagged_keys({"c", "a", "b"});
  MultiMutex multi(test_client(), {keys[0], keys[1], keys[2], keys[1], keys[0]}, token_options());
  EXPECT_THAT(multi.keys(), ElementsAre(keys[1], keys[2], keys[0]));
  ASSERT_TRUE(multi.try_lock());
  for (const auto& key : keys) EXPECT_EQ(raw({"GET", key}).str, multi.value()) << key;
}

TEST(MultiMutex, MovingHandsOverTheLease) {
  const auto keys = tagged_keys({"a", "b"});
  MultiMutex first(test_client(), keys, token_options());
  ASSERT_TRUE(first.try_lock());
  MultiMutex second = std::move(first);
  EXPECT_FALSE(first.owns_lock());  // NOLINT(bugprone-use-after-move): a moved-from object answers false
  EXPECT_TRUE(second.owns_lock());
  EXPECT_TRUE(exists(keys[0]));
  second.unlock();
  EXPECT_FALSE(exists(keys[0]));
}

}  // namespace
}  // namespace lockbridge::testing
