// The Mutex contract, for every strategy and preset: TimedLockable semantics, standard lock
// guards, exclusion of a second owner, lease end, harmless unlock.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <mutex>

#include "redis_test_support.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::milliseconds;

struct Variant {
  std::string name;
  MutexOptions options;
};

class MutexContract : public ::testing::TestWithParam<Variant> {
 protected:
  MutexOptions options() const { return GetParam().options; }
  MutexOptions options_with_lease(milliseconds lease) const {
    MutexOptions o = options();
    o.lease = lease;
    return o;
  }
  Client client_ = test_client();
};

TEST_P(MutexContract, TryLockAcquiresAFreeKeyAndKeepsOthersOut) {
  const std::string key = unique_key();
  Mutex first(client_, key, options());
  Mutex second(client_, key, options());
  ASSERT_TRUE(first.try_lock());
  EXPECT_TRUE(first.owns_lock());
  EXPECT_FALSE(first.value().empty());
  EXPECT_FALSE(second.try_lock());
  EXPECT_FALSE(second.owns_lock());
  first.unlock();
  EXPECT_FALSE(first.owns_lock());
  EXPECT_FALSE(first.last_error());
  EXPECT_TRUE(second.try_lock());
  second.unlock();
}

TEST_P(MutexContract, UnlockDeletesTheKey) {
  const std::string key = unique_key();
  Mutex mutex(client_, key, options());
  ASSERT_TRUE(mutex.try_lock());
  EXPECT_EQ(raw({"EXISTS", key}).integer, 1);
  mutex.unlock();
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

TEST_P(MutexContract, InspectShowsOurValueWhileHeld) {
  const std::string key = unique_key();
  Mutex mutex(client_, key, options());
  EXPECT_FALSE(mutex.inspect().exists);
  ASSERT_TRUE(mutex.try_lock());
  const LockInfo info = mutex.inspect();
  EXPECT_TRUE(info.exists);
  EXPECT_TRUE(info.held_by_me);
  EXPECT_EQ(info.value, mutex.value());
  EXPECT_EQ(raw({"GET", key}).str, mutex.value());
  mutex.unlock();
}

TEST_P(MutexContract, LockBlocksUntilTheHolderReleases) {
  const std::string key = unique_key();
  Mutex holder(client_, key, options());
  Mutex waiter(client_, key, options());
  ASSERT_TRUE(holder.try_lock());
  std::atomic<bool> waiter_got_it{false};
  std::thread thread([&] {
    waiter.lock();
    waiter_got_it = true;
  });
  // The waiter cannot get in while the holder holds: it is still waiting after our check.
  EXPECT_EQ(raw({"GET", key}).str, holder.value());
  EXPECT_FALSE(waiter_got_it);
  holder.unlock();
  thread.join();
  EXPECT_TRUE(waiter_got_it);
  EXPECT_TRUE(waiter.owns_lock());
  waiter.unlock();
}

TEST_P(MutexContract, LockThrowsTimeoutWhenNeverFreed) {
  const std::string key = unique_key();
  Mutex holder(client_, key, options());
  MutexOptions short_wait = options();
  short_wait.acquire_timeout = milliseconds(30);
  Mutex waiter(client_, key, short_wait);
  ASSERT_TRUE(holder.try_lock());
  const Error error = expect_error([&] { waiter.lock(); });
  EXPECT_EQ(error.errc(), Errc::timeout);
  EXPECT_THAT(error.what(), ::testing::HasSubstr(key.substr(0, 40)));  // long keys are shortened
  holder.unlock();
}

TEST_P(MutexContract, TryLockForGivesUpWithFalseWhileHeld) {
  const std::string key = unique_key();
  Mutex holder(client_, key, options());
  Mutex waiter(client_, key, options());
  ASSERT_TRUE(holder.try_lock());
  EXPECT_FALSE(waiter.try_lock_for(milliseconds(20)));
  EXPECT_FALSE(waiter.try_lock_until(std::chrono::system_clock::now() + milliseconds(20)));
  holder.unlock();
  EXPECT_TRUE(waiter.try_lock_for(milliseconds(20)));
  waiter.unlock();
}

TEST_P(MutexContract, TryLockForSucceedsOnceTheHolderReleases) {
  const std::string key = unique_key();
  Mutex holder(client_, key, options());
  Mutex waiter(client_, key, options());
  ASSERT_TRUE(holder.try_lock());
  // Whether the release lands before the waiter's first attempt or between two of its retries,
  // the waiter must end up with the lock.
  std::thread releaser([&] { holder.unlock(); });
  EXPECT_TRUE(waiter.try_lock_for(std::chrono::seconds(10)));
  releaser.join();
  waiter.unlock();
}

TEST_P(MutexContract, AnEndlessWaitIsAcceptedAndReturnsOnceFree) {
  Mutex mutex(client_, unique_key(), options());
  EXPECT_TRUE(mutex.try_lock_for(milliseconds::max()));
  mutex.unlock();
  EXPECT_TRUE(mutex.try_lock_for(std::chrono::nanoseconds::max()));
  mutex.unlock();
}

TEST_P(MutexContract, WorksWithUniqueLockAndLockGuard) {
  const std::string key = unique_key();
  Mutex mutex(client_, key, options());
  Mutex other(client_, key, options());
  {
    std::unique_lock guard(mutex);
    EXPECT_TRUE(guard.owns_lock());
    EXPECT_FALSE(other.try_lock());
  }
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
  {
    std::unique_lock guard(mutex, std::try_to_lock);
    EXPECT_TRUE(guard.owns_lock());
  }
  {
    std::unique_lock guard(mutex, std::defer_lock);
    EXPECT_TRUE(guard.try_lock_for(milliseconds(100)));
  }
  {
    std::lock_guard guard(mutex);
    EXPECT_TRUE(mutex.owns_lock());
  }
  EXPECT_FALSE(mutex.owns_lock());
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

TEST_P(MutexContract, ScopedLockTakesTwoKeys) {
  const std::string key_a = unique_key("a");
  const std::string key_b = unique_key("b");
  Mutex a(client_, key_a, options());
  Mutex b(client_, key_b, options());
  {
    std::scoped_lock both(a, b);
    EXPECT_TRUE(a.owns_lock());
    EXPECT_TRUE(b.owns_lock());
  }
  EXPECT_EQ(raw({"EXISTS", key_a}).integer, 0);
  EXPECT_EQ(raw({"EXISTS", key_b}).integer, 0);
}

TEST_P(MutexContract, ScopedLockBacksOffWhenOneKeyIsTaken) {
  const std::string key_a = unique_key("a");
  const std::string key_b = unique_key("b");
  Mutex a(client_, key_a, options());
  Mutex b(client_, key_b, options());
  Mutex b_holder(client_, key_b, options());
  ASSERT_TRUE(b_holder.try_lock());
  std::thread releaser([&] { b_holder.unlock(); });
  {
    std::scoped_lock both(a, b);  // std::lock's try-and-back-off algorithm over our try_lock
    EXPECT_TRUE(a.owns_lock());
    EXPECT_TRUE(b.owns_lock());
  }
  releaser.join();
}

TEST_P(MutexContract, LeaseEndFreesTheLock) {
  const std::string key = unique_key();
  // Long enough that the next line runs inside it on a loaded machine.
  Mutex crashed(client_, key, options_with_lease(milliseconds(1000)));
  Mutex next(client_, key, options());
  ASSERT_TRUE(crashed.try_lock());
  EXPECT_FALSE(next.try_lock());
  // The holder never releases (as if it crashed); the lease must free the key by itself.
  EXPECT_TRUE(next.try_lock_for(std::chrono::seconds(10)));
  EXPECT_EQ(raw({"GET", key}).str, next.value());
  next.unlock();
}

TEST_P(MutexContract, UnlockOfALockNotHeldIsHarmless) {
  const std::string key = unique_key();
  Mutex holder(client_, key, options());
  Mutex idle(client_, key, options());
  ASSERT_TRUE(holder.try_lock());
  idle.unlock();
  idle.unlock();
  EXPECT_FALSE(idle.last_error());
  EXPECT_EQ(raw({"GET", key}).str, holder.value());
  holder.unlock();
  holder.unlock();
  EXPECT_FALSE(holder.last_error());
}

TEST_P(MutexContract, LockingTwiceThroughOneMutexIsRefused) {
  const std::string key = unique_key();
  Mutex mutex(client_, key, options());
  ASSERT_TRUE(mutex.try_lock());
  EXPECT_EQ(expect_error([&] { (void)mutex.try_lock(); }).errc(), Errc::bad_option);
  EXPECT_TRUE(mutex.owns_lock());
  mutex.unlock();
}

TEST_P(MutexContract, DestructorReleases) {
  const std::string key = unique_key();
  {
    Mutex mutex(client_, key, options());
    ASSERT_TRUE(mutex.try_lock());
  }
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

TEST_P(MutexContract, MoveAssignmentReleasesTheOverwrittenLock) {
  const std::string key_a = unique_key("a");
  const std::string key_b = unique_key("b");
  Mutex a(client_, key_a, options());
  Mutex b(client_, key_b, options());
  ASSERT_TRUE(a.try_lock());
  ASSERT_TRUE(b.try_lock());
  a = std::move(b);
  EXPECT_EQ(raw({"EXISTS", key_a}).integer, 0);
  EXPECT_EQ(a.key(), key_b);
  EXPECT_TRUE(a.owns_lock());
  a.unlock();
  EXPECT_EQ(raw({"EXISTS", key_b}).integer, 0);
}

TEST_P(MutexContract, ValidForCountsDownFromTheLease) {
  const std::string key = unique_key();
  Mutex mutex(client_, key, options());
  EXPECT_EQ(mutex.valid_for(), milliseconds::zero());
  ASSERT_TRUE(mutex.try_lock());
  EXPECT_GT(mutex.valid_for(), milliseconds::zero());
  EXPECT_LE(mutex.valid_for(), options().lease);
  mutex.unlock();
  EXPECT_EQ(mutex.valid_for(), milliseconds::zero());
}

TEST_P(MutexContract, ReleaseErrorHandlerHearsOfALostLock) {
  const std::string key = unique_key();
  Mutex mutex(client_, key, options());
  std::optional<Errc> reported;
  mutex.on_release_error([&](const Error& error) { reported = error.errc(); });
  ASSERT_TRUE(mutex.try_lock());
  raw({"DEL", key});  // an operator deletes the key behind the holder's back
  mutex.unlock();
  EXPECT_EQ(mutex.last_error(), Errc::lease_lost);
  EXPECT_EQ(reported, Errc::lease_lost);
}

INSTANTIATE_TEST_SUITE_P(
    AllStrategies, MutexContract,
    ::testing::Values(Variant{"LegacyFaithful", faithful_options()}, Variant{"LegacyHardened", hardened_options()},
                      Variant{"LegacyFaithfulSeconds", faithful_options(LegacyFormat::epoch_seconds)},
                      Variant{"LegacyHardenedSeconds", hardened_options(LegacyFormat::epoch_seconds)},
                      Variant{"LegacyFaithfulUuid", faithful_options(LegacyFormat::uuid_ms)},
                      Variant{"LegacyHardenedUuid", hardened_options(LegacyFormat::uuid_ms)},
                      Variant{"Token", token_options()}),
    [](const ::testing::TestParamInfo<Variant>& param_info) { return param_info.param.name; });

}  // namespace
}  // namespace lockbridge::testing
