// The compat APIs against a real Redis: each behaves as the Java library it replaces (values, TTLs, timeouts,
// what release deletes), including the failure paths, and the documented differences hold (docs/compat.md).
// Outcomes, not timings: short timeouts only bound the waits. "hazard N" is docs/wire-formats.md hazard N.
#include <gtest/gtest.h>

#include <regex>
#include <stdexcept>
#include <thread>

#include "lockbridge/compat/jedis_lock.hpp"
#include "lockbridge/compat/jedis_lock_master.hpp"
#include "lockbridge/compat/redis_locker.hpp"
#include "lockbridge/compat/simple_lock.hpp"
#include "redis_test_support.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const std::string kOtherUuid = "0b6f0a2c-3c4d-4e5f-8a9b-0c1d2e3f4a5b";

std::int64_t pttl(const std::string& key) { return raw({"PTTL", key}).integer; }
bool exists(const std::string& key) { return raw({"EXISTS", key}).integer == 1; }
std::string live_stamp() { return std::to_string(wall_ms() + 600000); }

// ---- JedisLock (jedis-lock 1.0.0) ------------------------------------------------------------

TEST(CompatJedisLock, DefaultsAreJedisLocks) {
  EXPECT_EQ(compat::JedisLock::kDefaultTimeout, milliseconds(10000));
  EXPECT_EQ(compat::JedisLock::kDefaultExpire, milliseconds(60000));
  const std::string key = unique_key();
  compat::JedisLock lock(test_client(), key);
  EXPECT_EQ(lock.getLockKey(), key);
  ASSERT_TRUE(lock.acquire());
  const MutexOptions& options = lock.mutex()->options();
  EXPECT_EQ(options.lease, milliseconds(60000));
  EXPECT_EQ(options.acquire_timeout, milliseconds(10000));
  EXPECT_EQ(options.retry.kind, RetryPolicy::Kind::jedis_lock);
  EXPECT_EQ(options.retry.interval, milliseconds(100));
  EXPECT_EQ(options.legacy.preset, LegacyPreset::faithful);
  lock.release();
}

TEST(CompatJedisLock, AcquireWritesAnEpochMsStampWithoutTtlAndReleaseDeletesIt) {
  const std::string key = unique_key();
  compat::JedisLock lock(test_client(), key, milliseconds(10000), milliseconds(30000));
  EXPECT_FALSE(lock.isLocked());
  const std::int64_t before = wall_ms();
  ASSERT_TRUE(lock.acquire());
  const std::int64_t after = wall_ms();
  EXPECT_TRUE(lock.isLocked());
  const std::int64_t stamp = std::stoll(raw({"GET", key}).str);
  EXPECT_GE(stamp, before + 30000 + 1);
  EXPECT_LE(stamp, after + 30000 + 1);
  EXPECT_EQ(pttl(key), -1) << "jedis-lock never sets a TTL";
  lock.release();
  EXPECT_FALSE(lock.isLocked());
  EXPECT_FALSE(exists(key));
}

TEST(CompatJedisLock, AcquireTimesOutOnALiveStampAndLeavesIt) {
  const std::string key = unique_key();
  const std::string live = live_stamp();
  raw({"SET", key, live});
  compat::JedisLock lock(test_client(), key, milliseconds(200));
  EXPECT_FALSE(lock.acquire());
  EXPECT_FALSE(lock.isLocked());
  EXPECT_EQ(raw({"GET", key}).str, live);
}

TEST(CompatJedisLock, TakesOverAnExpiredStamp) {
  const std::string key = unique_key();
  raw({"SET", key, std::to_string(wall_ms() - 1000)});
  compat::JedisLock lock(test_client(), key);
  ASSERT_TRUE(lock.acquire());
  EXPECT_EQ(raw({"GET", key}).str, lock.mutex()->value());
  lock.release();
}

TEST(CompatJedisLock, AValueThatIsNotANumberThrowsBadValueAndIsLeftAlone) {
  const std::string key = unique_key();
  raw({"SET", key, "not-a-stamp"});
  compat::JedisLock lock(test_client(), key);
  EXPECT_EQ(expect_error([&] { (void)lock.acquire(); }).errc(), Errc::bad_value);
  EXPECT_FALSE(lock.isLocked());
  EXPECT_EQ(raw({"GET", key}).str, "not-a-stamp");
}

TEST(CompatJedisLock, ReleaseWhenNotLockedDeletesNothing) {
  const std::string key = unique_key();
  const std::string live = live_stamp();
  raw({"SET", key, live});
  compat::JedisLock lock(test_client(), key, milliseconds(0));
  lock.release();  // never acquired
  ASSERT_FALSE(lock.acquire());
  lock.release();  // acquire failed
  EXPECT_EQ(raw({"GET", key}).str, live);
}

TEST(CompatJedisLock, AFailedAcquireWhileLockedKeepsTheLock) {
  const std::string key = unique_key();
  compat::JedisLock lock(test_client(), key, milliseconds(0));
  ASSERT_TRUE(lock.acquire());
  const std::string ours = raw({"GET", key}).str;
  EXPECT_FALSE(lock.acquire()) << "our own live stamp is a live lock to jedis-lock 1.0.0";
  EXPECT_TRUE(lock.isLocked());
  EXPECT_EQ(raw({"GET", key}).str, ours);
  lock.release();
  EXPECT_FALSE(exists(key));
}

TEST(CompatJedisLock, ReleaseAfterTheStampExpiredDeletesAPeersTakeoverAsJedisLockDoes) {
  const std::string key = unique_key();
  compat::JedisLock lock(test_client(), key, milliseconds(0), milliseconds(50));
  ASSERT_TRUE(lock.acquire());
  const std::int64_t stamp = std::stoll(raw({"GET", key}).str);
  ASSERT_TRUE(eventually([&] { return wall_ms() > stamp; }));
  compat::JedisLock peer(test_client(), key);  // a Java peer takes the expired lock over
  ASSERT_TRUE(peer.acquire());
  EXPECT_TRUE(lock.isLocked()) << "the local flag never looks at Redis";
  lock.release();
  EXPECT_FALSE(exists(key)) << "the faithful flaw, kept: an unconditional DEL (wire-formats.md hazard 6)";
}

TEST(CompatJedisLock, WithoutAClientAcquireNeedsOne) {
  const std::string key = unique_key();
  compat::JedisLock lock(key);
  EXPECT_EQ(expect_error([&] { (void)lock.acquire(); }).errc(), Errc::bad_option);
  const Client client = test_client();
  ASSERT_TRUE(lock.acquire(client));
  EXPECT_TRUE(exists(key));
  lock.release(client);
  EXPECT_FALSE(exists(key));
}

TEST(CompatJedisLock, AnEmptyKeyIsABadOption) {
  EXPECT_EQ(expect_error([] { compat::JedisLock lock(test_client(), ""); }).errc(), Errc::bad_option);
}

// ---- JedisLockMaster (jedis-lock master, uuid:expiry) ----------------------------------------

TEST(CompatJedisLockMaster, WritesUuidColonExpiryWithoutTtl) {
  const std::string key = unique_key();
  compat::JedisLockMaster lock(test_client(), key, milliseconds(10000), milliseconds(30000));
  EXPECT_TRUE(std::regex_match(lock.getLockUUID(),
                               std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")));
  EXPECT_EQ(lock.getLockKeyPath(), key);
  const std::int64_t before = wall_ms();
  ASSERT_TRUE(lock.acquire());
  const std::int64_t after = wall_ms();
  EXPECT_TRUE(lock.isLocked());
  const std::int64_t expiry = lock.getLockExpiryTimeInMillis();
  EXPECT_GE(expiry, before + 30000 + 1);
  EXPECT_LE(expiry, after + 30000 + 1);
  EXPECT_EQ(raw({"GET", key}).str, lock.getLockUUID() + ":" + std::to_string(expiry));
  EXPECT_EQ(pttl(key), -1);
  lock.release();
  EXPECT_FALSE(lock.isLocked());
  EXPECT_FALSE(exists(key));
}

TEST(CompatJedisLockMaster, UsesTheUuidItIsGiven) {
  const std::string key = unique_key();
  compat::JedisLockMaster lock(test_client(), key, milliseconds(0), milliseconds(60000),
                               "0B6F0A2C-3C4D-4E5F-8A9B-0C1D2E3F4A5B");
  EXPECT_EQ(lock.getLockUUID(), kOtherUuid) << "written as java.util.UUID.toString() does: lowercase";
  ASSERT_TRUE(lock.acquire());
  EXPECT_EQ(raw({"GET", key}).str.substr(0, 37), kOtherUuid + ":");
  lock.release();
  EXPECT_EQ(expect_error([&] {
              compat::JedisLockMaster bad(test_client(), key, milliseconds(0), milliseconds(1), "nope");
            }).errc(),
            Errc::bad_option);
}

TEST(CompatJedisLockMaster, NeverTakesAnotherUuidsLiveLock) {
  const std::string key = unique_key();
  const std::string live = kOtherUuid + ":" + live_stamp();
  raw({"SET", key, live});
  compat::JedisLockMaster lock(test_client(), key, milliseconds(200));
  EXPECT_FALSE(lock.acquire());
  EXPECT_FALSE(lock.renew());
  EXPECT_FALSE(lock.isLocked());
  EXPECT_EQ(raw({"GET", key}).str, live);
}

TEST(CompatJedisLockMaster, TakesAnotherUuidsExpiredLock) {
  const std::string key = unique_key();
  raw({"SET", key, kOtherUuid + ":" + std::to_string(wall_ms() - 1000)});
  compat::JedisLockMaster lock(test_client(), key);
  ASSERT_TRUE(lock.acquire());
  EXPECT_EQ(raw({"GET", key}).str, lock.mutex()->value());
  lock.release();
}

// DANGER, kept on purpose (docs/wire-formats.md hazard 1): what master cannot read, it steals.
TEST(CompatJedisLockMaster, StealsAValueItCannotReadWhileItsHolderStillRuns) {
  for (const std::string& foreign : {live_stamp(), std::string("d77d35b6b3da96da86da6422474258d8"),
                                     std::string("garbage"), kOtherUuid + ":", kOtherUuid + ":not-a-number"}) {
    SCOPED_TRACE(foreign);
    const std::string key = unique_key();
    raw({"SET", key, foreign, "PX", "600000"});
    compat::JedisLockMaster lock(test_client(), key, milliseconds(0));
    ASSERT_TRUE(lock.acquire()) << "taken over at the first attempt";
    EXPECT_EQ(raw({"GET", key}).str, lock.mutex()->value());
    EXPECT_EQ(pttl(key), -1) << "GETSET dropped the holder's TTL (hazard 2)";
    lock.release();
  }
}

TEST(CompatJedisLockMaster, ReadsOnlyTheFirstTwoColonSeparatedParts) {
  const std::string key = unique_key();
  const std::string live = kOtherUuid + ":" + live_stamp() + ":more";
  raw({"SET", key, live});
  compat::JedisLockMaster lock(test_client(), key, milliseconds(0));
  EXPECT_FALSE(lock.acquire()) << "Java's split(\":\") reads <uuid>:<ms> and ignores the rest";
  EXPECT_EQ(raw({"GET", key}).str, live);
}

TEST(CompatJedisLockMaster, TwoObjectsWithOneUuidAreOneOwner) {
  const std::string key = unique_key();
  compat::JedisLockMaster first(test_client(), key, milliseconds(0));
  compat::JedisLockMaster second(test_client(), key, milliseconds(0), compat::JedisLockMaster::kDefaultExpiry,
                                 first.getLockUUID());
  ASSERT_TRUE(first.acquire());
  ASSERT_TRUE(second.acquire()) << "the same UUID is \"mine\" (hazard 12)";
  EXPECT_EQ(raw({"GET", key}).str, second.mutex()->value());
  second.release();
  EXPECT_FALSE(exists(key));
}

TEST(CompatJedisLockMaster, AcquireAndRenewWhileLockedWriteALaterExpiry) {
  const std::string key = unique_key();
  compat::JedisLockMaster lock(test_client(), key, milliseconds(0));
  ASSERT_TRUE(lock.acquire());
  const std::int64_t first = lock.getLockExpiryTimeInMillis();
  ASSERT_TRUE(eventually([&] { return wall_ms() + 60000 + 1 > first; }));
  ASSERT_TRUE(lock.acquire());
  const std::int64_t second = lock.getLockExpiryTimeInMillis();
  EXPECT_GT(second, first);
  ASSERT_TRUE(eventually([&] { return wall_ms() + 60000 + 1 > second; }));
  ASSERT_TRUE(lock.renew());
  EXPECT_GT(lock.getLockExpiryTimeInMillis(), second);
  EXPECT_EQ(raw({"GET", key}).str, lock.mutex()->value());
  lock.release();
  EXPECT_FALSE(exists(key)) << "one release ends every refresh: no hold was left behind";
}

TEST(CompatJedisLockMaster, RenewOfAFreeKeyAcquiresIt) {
  const std::string key = unique_key();
  compat::JedisLockMaster lock(test_client(), key, milliseconds(0));
  ASSERT_TRUE(lock.renew()) << "a missing value is NO_LOCK, expired: renew() runs acquire()";
  EXPECT_TRUE(lock.isLocked());
  lock.release();
}

TEST(CompatJedisLockMaster, ReleaseWhenNotLockedDeletesNothingAndTheExpiryIsUnknown) {
  const std::string key = unique_key();
  const std::string live = kOtherUuid + ":" + live_stamp();
  raw({"SET", key, live});
  compat::JedisLockMaster lock(test_client(), key, milliseconds(0));
  lock.release();
  EXPECT_EQ(raw({"GET", key}).str, live);
  EXPECT_EQ(expect_error([&] { (void)lock.getLockExpiryTimeInMillis(); }).errc(), Errc::bad_option);
}

TEST(CompatJedisLockMaster, AHashAtTheKeyIsWrongType) {
  const std::string key = unique_key();
  raw({"HSET", key, "field", "1"});
  compat::JedisLockMaster lock(test_client(), key, milliseconds(0));
  EXPECT_EQ(expect_error([&] { (void)lock.acquire(); }).errc(), Errc::wrong_type);
  EXPECT_EQ(expect_error([&] { (void)lock.renew(); }).errc(), Errc::wrong_type);
  EXPECT_EQ(raw({"TYPE", key}).str, "hash");
}

// ---- RedisLocker (Plen-wang/redis-lock) ------------------------------------------------------

compat::RedisLocker quick_locker(int retries = 2) {
  return compat::RedisLocker(test_client(), compat::RedisLockerOptions{retries, milliseconds(5)});
}

TEST(CompatRedisLocker, DefaultsAreTheSeeds) {
  const compat::RedisLockerOptions defaults;
  EXPECT_EQ(defaults.retry_count, 10);
  EXPECT_EQ(defaults.wait_lock_time, milliseconds(2000));
  const compat::RedisLocker locker(test_client());
  EXPECT_EQ(locker.options().retry_count, 10);
  EXPECT_EQ(locker.options().wait_lock_time, milliseconds(2000));
}

TEST(CompatRedisLocker, TheIdentityIsOneUuidPerProcess) {
  const std::string identity = compat::RedisLocker::getRedisIdentityKey();
  EXPECT_TRUE(
      std::regex_match(identity, std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")));
  EXPECT_EQ(compat::RedisLocker::getRedisIdentityKey(), identity);
  // A forked child is another process: its own identity, so a key the parent holds is not its.
  const std::string child = in_forked_child([] { return compat::RedisLocker::getRedisIdentityKey(); });
  EXPECT_TRUE(std::regex_match(child, std::regex("[0-9a-f-]{36}"))) << child;
  EXPECT_NE(child, identity);
  EXPECT_EQ(compat::RedisLocker::getRedisIdentityKey(), identity);
}

TEST(CompatRedisLocker, AcquireWritesTheIdentityWithTheTtl) {
  const std::string key = unique_key();
  auto locker = quick_locker();
  ASSERT_TRUE(locker.acquireLockWithTimeout(seconds(50), key, false));
  EXPECT_EQ(raw({"GET", key}).str, compat::RedisLocker::getRedisIdentityKey());
  EXPECT_GT(pttl(key), 0);
  EXPECT_LE(pttl(key), 50000);
  EXPECT_TRUE(locker.releaseLockWithTimeout(key));
  EXPECT_FALSE(exists(key));
}

TEST(CompatRedisLocker, AHeldKeyIsNotAcquiredWithOrWithoutWaiting) {
  const std::string key = unique_key();
  raw({"SET", key, "another-process", "EX", "100"});
  auto locker = quick_locker(3);
  EXPECT_FALSE(locker.acquireLockWithTimeout(seconds(50), key, false));
  EXPECT_FALSE(locker.acquireLockWithTimeout(seconds(50), key, true));
  EXPECT_EQ(raw({"GET", key}).str, "another-process");
}

TEST(CompatRedisLocker, WaitingMakesOnePlusRetryCountAttempts) {
  const std::string key = unique_key();
  raw({"SET", key, "another-process", "EX", "100"});
  Client client = test_client();
  client.ping();  // connected first: the count below is attempts only
  compat::RedisLocker locker(client, compat::RedisLockerOptions{3, milliseconds(1)});
  const auto before = client.stats().round_trips;
  EXPECT_FALSE(locker.acquireLockWithTimeout(seconds(50), key, true));
  EXPECT_EQ(client.stats().round_trips - before, 4U);
  const auto single = client.stats().round_trips;
  EXPECT_FALSE(locker.acquireLockWithTimeout(seconds(50), key, false));
  EXPECT_EQ(client.stats().round_trips - single, 1U);
}

TEST(CompatRedisLocker, AWaiterGetsTheKeyWhenTheHolderReleases) {
  const std::string key = unique_key();
  raw({"SET", key, "another-process", "PX", "100"});  // ends by its TTL: RedisLocker's holders never announce
  auto locker = compat::RedisLocker(test_client(), compat::RedisLockerOptions{1000, milliseconds(5)});
  ASSERT_TRUE(locker.acquireLockWithTimeout(seconds(50), key, true));
  EXPECT_EQ(raw({"GET", key}).str, compat::RedisLocker::getRedisIdentityKey());
  EXPECT_TRUE(locker.releaseLockWithTimeout(key));
}

TEST(CompatRedisLocker, ThreadsOfOneProcessExcludeEachOther) {
  const std::string key = unique_key();
  auto locker = quick_locker(0);
  ASSERT_TRUE(locker.acquireLockWithTimeout(seconds(50), key, false));
  bool second = true;
  std::thread([&] { second = locker.acquireLockWithTimeout(seconds(50), key, true); }).join();
  EXPECT_FALSE(second) << "one identity, but SET NX still finds the key taken";
  EXPECT_TRUE(locker.releaseLockWithTimeout(key));
}

TEST(CompatRedisLocker, ReleaseOfAKeyItDoesNotHoldLeavesItAlone) {
  const std::string key = unique_key();
  raw({"SET", key, "another-process", "EX", "100"});
  auto locker = quick_locker();
  EXPECT_FALSE(locker.releaseLockWithTimeout(key)) << "RedisLocker would DEL it (hazard 6)";
  EXPECT_EQ(raw({"GET", key}).str, "another-process");
  EXPECT_FALSE(locker.releaseLockWithTimeout(unique_key("never-existed")));
}

TEST(CompatRedisLocker, ReleaseAfterAnotherProcessTookTheKeyOverLeavesIt) {
  const std::string key = unique_key();
  auto locker = quick_locker();
  ASSERT_TRUE(locker.acquireLockWithTimeout(seconds(50), key, false));
  raw({"SET", key, "another-process", "EX", "100"});  // our TTL ran out and another process took it
  EXPECT_FALSE(locker.releaseLockWithTimeout(key));
  EXPECT_EQ(raw({"GET", key}).str, "another-process");
  EXPECT_FALSE(locker.releaseLockWithTimeout(key)) << "released once: nothing left to release";
}

TEST(CompatRedisLocker, ANewHoldAfterTheOldOneEndedInRedisSurvivesTheOldOne) {
  const std::string key = unique_key();
  auto locker = quick_locker();
  ASSERT_TRUE(locker.acquireLockWithTimeout(seconds(50), key, false));
  raw({"DEL", key});  // as if its TTL had run out
  ASSERT_TRUE(locker.acquireLockWithTimeout(seconds(50), key, false));
  EXPECT_TRUE(exists(key)) << "the superseded hold (same identity) must not delete the new one";
  EXPECT_TRUE(locker.releaseLockWithTimeout(key));
  EXPECT_FALSE(exists(key));
}

TEST(CompatRedisLocker, DestroyingTheLockerReleasesWhatItHolds) {
  const std::string key = unique_key();
  {
    auto locker = quick_locker();
    ASSERT_TRUE(locker.acquireLockWithTimeout(seconds(50), key, false));
  }
  EXPECT_FALSE(exists(key));
}

TEST(CompatRedisLocker, AnEmptyKeyOrALeaseUnderOneSecondIsABadOption) {
  auto locker = quick_locker();
  EXPECT_EQ(expect_error([&] { (void)locker.acquireLockWithTimeout(seconds(50), "", false); }).errc(),
            Errc::bad_option);
  EXPECT_EQ(expect_error([&] { (void)locker.acquireLockWithTimeout(seconds(0), unique_key(), false); }).errc(),
            Errc::bad_option);
  EXPECT_EQ(expect_error([] {
              compat::RedisLocker bad(test_client(), compat::RedisLockerOptions{-1, milliseconds(1)});
            }).errc(),
            Errc::bad_option);
}

// A lease in seconds too long to be a lease in milliseconds is refused before it is converted:
// seconds::max() in milliseconds overflows.
TEST(CompatRedisLocker, ALeaseInSecondsBeyondTheLongestLeaseIsABadOptionNotAnOverflow) {
  auto locker = quick_locker();
  const std::string key = unique_key();
  for (const seconds lease : {seconds::max(), seconds(366LL * 24 * 3600)}) {
    const Error error = expect_error([&] { (void)locker.acquireLockWithTimeout(lease, key, false); });
    EXPECT_EQ(error.errc(), Errc::bad_option);
    EXPECT_THAT(error.what(), ::testing::HasSubstr("365 days"));
  }
  EXPECT_FALSE(exists(key));
}

TEST(CompatRedisLocker, AHashAtTheKeyIsWrongType) {
  const std::string key = unique_key();
  raw({"HSET", key, "field", "1"});
  auto locker = quick_locker();
  EXPECT_EQ(expect_error([&] { (void)locker.acquireLockWithTimeout(seconds(50), key, false); }).errc(),
            Errc::wrong_type);
}

// ---- SimpleLock (the wrapper blog posts on jedis-lock 1.0.0 show; docs/compat.md §2) ------------

TEST(CompatSimpleLock, WrapRunsTheBodyUnderTheLockAndReleases) {
  const std::string key = unique_key();
  compat::SimpleLock lock(test_client(), key);
  const std::optional<int> result = lock.wrap([&] {
    EXPECT_TRUE(lock.lock().isLocked());
    EXPECT_EQ(raw({"GET", key}).str, lock.lock().mutex()->value());
    return 42;
  });
  EXPECT_EQ(result, 42);
  EXPECT_FALSE(lock.lock().isLocked());
  EXPECT_FALSE(exists(key));
  bool ran = false;
  EXPECT_TRUE(lock.wrap([&] { ran = true; }));
  EXPECT_TRUE(ran);
  EXPECT_FALSE(exists(key));
}

TEST(CompatSimpleLock, WhenTheLockIsNotAcquiredTheBodyDoesNotRun) {
  const std::string key = unique_key();
  const std::string live = live_stamp();
  raw({"SET", key, live});
  compat::SimpleLock lock(test_client(), key, milliseconds(200));
  bool ran = false;
  EXPECT_FALSE(lock.wrap([&] { ran = true; }));
  EXPECT_EQ(lock.wrap([&] {
    ran = true;
    return 1;
  }),
            std::nullopt);
  EXPECT_FALSE(ran);
  EXPECT_EQ(raw({"GET", key}).str, live) << "not ours: not released";
}

TEST(CompatSimpleLock, ReleasesWhenTheBodyThrows) {
  const std::string key = unique_key();
  compat::SimpleLock lock(test_client(), key);
  EXPECT_THROW((void)lock.wrap([]() -> int { throw std::runtime_error("business failed"); }), std::runtime_error);
  EXPECT_FALSE(lock.lock().isLocked());
  EXPECT_FALSE(exists(key));
}

TEST(CompatSimpleLock, AnAcquireErrorPropagatesAndTheBodyDoesNotRun) {
  const std::string key = unique_key();
  raw({"SET", key, "not-a-stamp"});
  compat::SimpleLock lock(test_client(), key);
  bool ran = false;
  EXPECT_EQ(expect_error([&] { (void)lock.wrap([&] { ran = true; }); }).errc(), Errc::bad_value);
  EXPECT_FALSE(ran);
  EXPECT_EQ(raw({"GET", key}).str, "not-a-stamp");
}

}  // namespace
}  // namespace lockbridge::testing
