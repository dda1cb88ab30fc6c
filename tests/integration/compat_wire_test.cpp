// The compat APIs, recorded on the server with MONITOR, must send the golden transcripts in
// compat/golden/<peer>/: the same commands as the Java library they replace (jedis-lock 1.0.0 and
// master), or the documented atomic equivalent (RedisLocker), or the token strategy that the blog recipe
// "token + Lua release + renewal" maps onto (docs/compat.md §5).
#include <gtest/gtest.h>

#include "golden_transcript.hpp"
#include "lockbridge/compat/jedis_lock.hpp"
#include "lockbridge/compat/jedis_lock_master.hpp"
#include "lockbridge/compat/redis_locker.hpp"
#include "lockbridge/compat/simple_lock.hpp"
#include "redis_test_support.hpp"
#include "strategies/companion_keys.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// ---- jedis-lock 1.0.0 ----------------------------------------------------------------------------

class CompatWireJedisLock : public ::testing::Test {
 protected:
  const std::string key_ = unique_key();
  Placeholders stamps(std::int64_t before, std::int64_t after) const {
    return {{"{key}", exactly(key_)}, {"{stamp}", stamp_between(before, after, 60000)}};
  }
  void expect(const std::string& name, const std::function<void()>& operation) {
    expect_wire("jedis-lock-1.0.0", name, key_, operation, [this](auto b, auto a) { return stamps(b, a); });
  }
};

TEST_F(CompatWireJedisLock, AcquireOnAFreeKeyIsOneSetnx) {
  compat::JedisLock lock(test_client(), key_);
  expect("acquire_free.txt", [&] { ASSERT_TRUE(lock.acquire()); });
}

TEST_F(CompatWireJedisLock, AnAttemptOnALiveKeyIsSetnxThenGet) {
  raw({"SET", key_, std::to_string(wall_ms() + 600000)});
  compat::JedisLock lock(test_client(), key_, milliseconds(0));
  expect("acquire_held.txt", [&] { ASSERT_FALSE(lock.acquire()); });
}

TEST_F(CompatWireJedisLock, TakingOverAnExpiredKeyIsSetnxGetGetset) {
  raw({"SET", key_, std::to_string(wall_ms() - 1000)});
  compat::JedisLock lock(test_client(), key_);
  expect("acquire_expired.txt", [&] { ASSERT_TRUE(lock.acquire()); });
}

TEST_F(CompatWireJedisLock, ATimeoutOf300MsIsFourAttempts) {
  raw({"SET", key_, std::to_string(wall_ms() + 600000)});
  compat::JedisLock lock(test_client(), key_, milliseconds(300));
  expect("acquire_timeout_300ms.txt", [&] { ASSERT_FALSE(lock.acquire()); });
}

TEST_F(CompatWireJedisLock, ReleaseIsAPlainDel) {
  compat::JedisLock lock(test_client(), key_);
  ASSERT_TRUE(lock.acquire());
  expect("release.txt", [&] { lock.release(); });
}

// ---- jedis-lock master -----------------------------------------------------------------------

class CompatWireJedisLockMaster : public ::testing::Test {
 protected:
  const std::string key_ = unique_key();
  compat::JedisLockMaster lock_{test_client(), key_};
  Placeholders values(std::int64_t before, std::int64_t after) const {
    return {{"{key}", exactly(key_)}, {"{value}", stamp_between(before, after, 60000, lock_.getLockUUID() + ":")}};
  }
  void expect(const std::string& name, const std::function<void()>& operation) {
    expect_wire("jedis-lock-master", name, key_, operation, [this](auto b, auto a) { return values(b, a); });
  }
};

TEST_F(CompatWireJedisLockMaster, AcquireOnAFreeKeyIsOneSetnx) {
  expect("acquire_free.txt", [&] { ASSERT_TRUE(lock_.acquire()); });
}

TEST_F(CompatWireJedisLockMaster, AnAttemptOnAnotherUuidsLiveKeyIsSetnxThenGet) {
  raw({"SET", key_, "0b6f0a2c-3c4d-4e5f-8a9b-0c1d2e3f4a5b:" + std::to_string(wall_ms() + 600000)});
  compat::JedisLockMaster once(test_client(), key_, milliseconds(0));
  expect_wire(
      "jedis-lock-master", "acquire_held.txt", key_, [&] { ASSERT_FALSE(once.acquire()); },
      [&](auto b, auto a) {
        return Placeholders{{"{key}", exactly(key_)},
                            {"{value}", stamp_between(b, a, 60000, once.getLockUUID() + ":")}};
      });
}

TEST_F(CompatWireJedisLockMaster, AnUnreadableValueIsStolenBySetnxGetGetset) {
  raw({"SET", key_, std::to_string(wall_ms() + 600000)});  // a live jedis-lock 1.0.0 lock
  expect("acquire_unparsable.txt", [&] { ASSERT_TRUE(lock_.acquire()); });
}

TEST_F(CompatWireJedisLockMaster, RenewWhileHoldingIsGetThenTheAcquireLoop) {
  ASSERT_TRUE(lock_.acquire());
  expect("renew_mine.txt", [&] { ASSERT_TRUE(lock_.renew()); });
}

TEST_F(CompatWireJedisLockMaster, RenewOnAnotherUuidsLiveKeyIsOneGet) {
  raw({"SET", key_, "0b6f0a2c-3c4d-4e5f-8a9b-0c1d2e3f4a5b:" + std::to_string(wall_ms() + 600000)});
  expect("renew_not_ours.txt", [&] { ASSERT_FALSE(lock_.renew()); });
}

TEST_F(CompatWireJedisLockMaster, ReleaseIsAPlainDel) {
  ASSERT_TRUE(lock_.acquire());
  expect("release.txt", [&] { lock_.release(); });
}

// ---- RedisLocker -----------------------------------------------------------------------------

class CompatWireRedisLocker : public ::testing::Test {
 protected:
  const std::string key_ = unique_key();
  compat::RedisLocker locker_{test_client(), compat::RedisLockerOptions{2, milliseconds(1)}};
  void expect(const std::string& name, const std::function<void()>& operation) {
    expect_wire("redis-locker", name, key_, operation, [this](auto, auto) {
      return Placeholders{{"{key}", exactly(key_)},
                          {"{identity}", exactly(compat::RedisLocker::getRedisIdentityKey())},
                          {"{sha}", kSha},
                          {"{channel}", exactly(detail::release_channel(key_))},
                          {"{waiters}", exactly(detail::waiter_queue(key_))},
                          {"{waiter-times}", exactly(detail::waiter_times(key_))},
                          {"{grant}", exactly(detail::grant_record(key_))},
                          {"{fence}", exactly(detail::fence_counter(key_))},
                          {"{none}", exactly("")}};
    });
  }
};

TEST_F(CompatWireRedisLocker, AcquireIsOneAtomicSetNxWithTheTtl) {
  expect("acquire_free.txt", [&] { ASSERT_TRUE(locker_.acquireLockWithTimeout(seconds(50), key_, true)); });
}

TEST_F(CompatWireRedisLocker, WithoutWaitingAHeldKeyCostsOneAttempt) {
  raw({"SET", key_, "another-process", "EX", "100"});
  expect("acquire_held_no_wait.txt", [&] { ASSERT_FALSE(locker_.acquireLockWithTimeout(seconds(50), key_, false)); });
}

TEST_F(CompatWireRedisLocker, WaitingMakesOnePlusRetryCountAttempts) {
  raw({"SET", key_, "another-process", "EX", "100"});
  expect("acquire_held_wait.txt", [&] { ASSERT_FALSE(locker_.acquireLockWithTimeout(seconds(50), key_, true)); });
}

TEST_F(CompatWireRedisLocker, ReleaseIsOneCompareAndDelete) {
  ASSERT_TRUE(locker_.acquireLockWithTimeout(seconds(50), key_, false));
  expect("release.txt", [&] { ASSERT_TRUE(locker_.releaseLockWithTimeout(key_)); });
}

// ---- SimpleLock --------------------------------------------------------------------------------

TEST(CompatWireSimpleLock, WrapIsJedisLocksAcquireThenRelease) {
  const std::string key = unique_key();
  compat::SimpleLock lock(test_client(), key);
  expect_wire(
      "simple-lock", "wrap.txt", key, [&] { ASSERT_EQ(lock.wrap([] { return 7; }), 7); },
      [&](auto b, auto a) {
        return Placeholders{{"{key}", exactly(key)}, {"{stamp}", stamp_between(b, a, 60000)}};
      });
}

TEST(CompatWireSimpleLock, NotAcquiredMeansNoBodyAndNoRelease) {
  const std::string key = unique_key();
  raw({"SET", key, std::to_string(wall_ms() + 600000)});
  compat::SimpleLock lock(test_client(), key, milliseconds(0));
  expect_wire(
      "simple-lock", "wrap_not_acquired.txt", key, [&] { ASSERT_FALSE(lock.wrap([] {})); },
      [&](auto b, auto a) {
        return Placeholders{{"{key}", exactly(key)}, {"{stamp}", stamp_between(b, a, 60000)}};
      });
}

// ---- the blog recipe, token + Lua release + renewal = the token strategy with the watchdog -------

class CompatWireTokenWatchdog : public ::testing::Test {
 protected:
  const std::string key_ = unique_key();
  Mutex mutex_{test_client(), key_, options()};
  static MutexOptions options() {
    MutexOptions options;  // token strategy
    options.lease = seconds(30);
    options.watchdog.enabled = true;
    return options;
  }
  void expect(const std::string& name, const std::function<void()>& operation) {
    expect_wire("token-watchdog", name, key_, operation, [this](auto, auto) {
      return Placeholders{{"{key}", exactly(key_)},
                          {"{token}", mutex_.value().empty() ? matching("[0-9a-f]{32}") : exactly(mutex_.value())},
                          {"{sha}", kSha},
                          {"{channel}", exactly(detail::release_channel(key_))}};
    });
  }
};

TEST_F(CompatWireTokenWatchdog, AcquireIsOneSetNxPx) {
  expect("acquire.txt", [&] { ASSERT_TRUE(mutex_.try_lock()); });
}

TEST_F(CompatWireTokenWatchdog, ARenewalIsOneCompareAndPexpire) {
  ASSERT_TRUE(mutex_.try_lock());
  expect("renewal.txt", [&] { ASSERT_TRUE(mutex_.extend(seconds(30))); });
}

TEST_F(CompatWireTokenWatchdog, ReleaseIsOneCompareAndDelete) {
  ASSERT_TRUE(mutex_.try_lock());
  const std::string token = mutex_.value();
  expect_wire(
      "token-watchdog", "release.txt", key_, [&] { mutex_.unlock(); },
      [&](auto, auto) {
        return Placeholders{{"{key}", exactly(key_)},
                            {"{token}", exactly(token)},
                            {"{sha}", kSha},
                            {"{channel}", exactly(detail::release_channel(key_))},
                            {"{waiters}", exactly(detail::waiter_queue(key_))},
                            {"{waiter-times}", exactly(detail::waiter_times(key_))},
                          {"{grant}", exactly(detail::grant_record(key_))},
                          {"{fence}", exactly(detail::fence_counter(key_))},
                          {"{none}", exactly("")}};
      });
}

}  // namespace
}  // namespace lockbridge::testing
