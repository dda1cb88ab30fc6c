// The token strategy against a real Redis: random owner tokens, owner-checked release and extend.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

#include "redis_test_support.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::milliseconds;

TEST(Token, WritesA128BitHexTokenWithTheLeaseAsTtl) {
  const std::string key = unique_key();
  MutexOptions options = token_options();
  options.lease = milliseconds(30000);
  Mutex mutex(test_client(), key, options);
  ASSERT_TRUE(mutex.try_lock());
  const std::string value = raw({"GET", key}).str;
  EXPECT_TRUE(std::regex_match(value, std::regex("^[0-9a-f]{32}$"))) << value;
  EXPECT_EQ(value, mutex.value());
  const std::int64_t pttl = raw({"PTTL", key}).integer;
  EXPECT_GT(pttl, 0);
  EXPECT_LE(pttl, 30000);
  mutex.unlock();
}

TEST(Token, EveryAcquisitionUsesAFreshToken) {
  const std::string key = unique_key();
  Mutex mutex(test_client(), key, token_options());
  ASSERT_TRUE(mutex.try_lock());
  const std::string first = mutex.value();
  mutex.unlock();
  ASSERT_TRUE(mutex.try_lock());
  EXPECT_NE(mutex.value(), first);
  mutex.unlock();
}

TEST(Token, ReleaseNeverTouchesAnotherOwnersLock) {
  const std::string key = unique_key();
  auto [stalled, next] = take_over_after_lease_end(key, token_options());  // once the PX lease ran out
  stalled.unlock();
  EXPECT_EQ(stalled.last_error(), Errc::lease_lost);
  EXPECT_EQ(raw({"GET", key}).str, next.value());
  EXPECT_GT(raw({"PTTL", key}).integer, 0);
  next.unlock();
}

// A user whose ACL refuses scripts takes the lock with SET NX, so it must be able to give it back:
// the release runs as WATCH, GET, MULTI, DEL, EXEC, still owner-checked.
TEST(Token, AUserThatMayNotRunScriptsStillReleasesItsLockAndOnlyItsOwn) {
  const AclUser user({"+@all", "-@scripting"});
  const Client client(user.url());
  const std::string key = unique_key();
  Mutex mutex(client, key, token_options());
  ASSERT_TRUE(mutex.try_lock());
  mutex.unlock();
  EXPECT_FALSE(mutex.last_error()) << mutex.last_error().message();
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0) << "released, not left for its whole lease";

  ASSERT_TRUE(mutex.try_lock());
  raw({"SET", key, "someone-else", "PX", "5000"});  // the lease ran out and another took it
  mutex.unlock();
  EXPECT_EQ(mutex.last_error(), Errc::lease_lost);
  EXPECT_EQ(raw({"GET", key}).str, "someone-else");
  raw({"DEL", key});
}

TEST(Token, AUserThatMayRunNeitherScriptsNorWatchIsToldTheLockStaysUntilItsLeaseEnds) {
  const AclUser user({"+@all", "-@scripting", "-watch"});
  const std::string key = unique_key();
  Mutex mutex(Client(user.url()), key, token_options());
  std::string reported;
  mutex.on_release_error([&](const Error& error) { reported = error.what(); });
  ASSERT_TRUE(mutex.try_lock());
  mutex.unlock();
  EXPECT_EQ(mutex.last_error(), Errc::server_reply);
  EXPECT_THAT(reported, ::testing::HasSubstr("'watch'"));
  EXPECT_THAT(reported, ::testing::HasSubstr("the lock stays until its lease ends"));
  raw({"DEL", key});
}

TEST(Token, ExtendNeverTouchesAnotherOwnersLock) {
  const std::string key = unique_key();
  Mutex mutex(test_client(), key, token_options());
  ASSERT_TRUE(mutex.try_lock());
  raw({"SET", key, "someone-else", "PX", "5000"});
  EXPECT_FALSE(mutex.extend(milliseconds(600000)));
  EXPECT_EQ(mutex.last_error(), Errc::lease_lost);
  EXPECT_FALSE(mutex.owns_lock());
  EXPECT_EQ(raw({"GET", key}).str, "someone-else");
  EXPECT_LE(raw({"PTTL", key}).integer, 5000);
}

TEST(Token, ExtendResetsTheTtlOfOurOwnLock) {
  const std::string key = unique_key();
  MutexOptions options = token_options();
  options.lease = milliseconds(2000);
  Mutex mutex(test_client(), key, options);
  ASSERT_TRUE(mutex.try_lock());
  ASSERT_TRUE(mutex.extend(milliseconds(600000)));
  EXPECT_GT(raw({"PTTL", key}).integer, 500000);
  EXPECT_GT(mutex.valid_for(), milliseconds(500000));
  EXPECT_EQ(raw({"GET", key}).str, mutex.value());
  mutex.unlock();
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

TEST(Token, ExtendOfALockNotHeldIsRefused) {
  Mutex mutex(test_client(), unique_key(), token_options());
  EXPECT_EQ(expect_error([&] { (void)mutex.extend(milliseconds(1000)); }).errc(), Errc::bad_option);
}

TEST(Token, AKeyHoldingAHashIsAWrongTypeErrorAndIsLeftAlone) {
  const std::string key = unique_key();
  raw({"HSET", key, "field", "1"});
  Mutex mutex(test_client(), key, token_options());
  const Error error = expect_error([&] { (void)mutex.try_lock(); });
  EXPECT_EQ(error.errc(), Errc::wrong_type);
  EXPECT_THAT(error.what(), ::testing::HasSubstr("hash"));
  EXPECT_EQ(raw({"TYPE", key}).str, "hash");
  EXPECT_EQ(raw({"HGET", key, "field"}).str, "1");
}

TEST(Token, ScriptsComeBackAfterTheServerForgetsThem) {
  const std::string key = unique_key();
  const Client client = test_client();
  Mutex mutex(client, key, token_options());
  ASSERT_TRUE(mutex.try_lock());
  mutex.unlock();
  raw({"SCRIPT", "FLUSH"});  // as after a restart: EVALSHA now gets NOSCRIPT, and EVAL takes over
  ASSERT_TRUE(mutex.try_lock());
  EXPECT_EQ(raw({"GET", key}).str, mutex.value());
  mutex.unlock();
  EXPECT_FALSE(mutex.last_error());
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

TEST(Token, BinaryKeysAreLockedAsTheyAre) {
  const std::string key = unique_key() + std::string("\0\n\xff spaced", 10);
  Mutex mutex(test_client(), key, token_options());
  ASSERT_TRUE(mutex.try_lock());
  EXPECT_EQ(test_client().command({"GET", key}).str, mutex.value());
  mutex.unlock();
  EXPECT_EQ(test_client().command({"EXISTS", key}).integer, 0);
}

}  // namespace
}  // namespace lockbridge::testing
