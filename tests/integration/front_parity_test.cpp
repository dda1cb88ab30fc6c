// The same behaviour through both fronts: each test runs once on the blocking Mutex and once on
// the async AsyncMutex (driven by an io_context on the test's thread), for every strategy and
// preset, against the fixture's real server. A lock is reached through FrontLock, which turns
// either front's operations into calls that return once the operation ended, with the front's
// outcome and error code; a test then states the behaviour once.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <system_error>
#include <tuple>

#include "front_lock.hpp"
#include "lockbridge/asio.hpp"
#include "loop_runner.hpp"
#include "redis_test_support.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

struct Variant {
  std::string name;
  std::function<MutexOptions()> options;
  bool extends = true;  // the faithful legacy preset's protocol has no extend
};

void PrintTo(const Variant& variant, std::ostream* out) { *out << variant.name; }

MutexOptions with_fencing() {
  MutexOptions options = token_options();
  options.token.fencing = true;
  return options;
}

MutexOptions fair() {
  MutexOptions options = token_options();
  options.wait_mode = WaitMode::fair;
  return options;
}

const Variant kVariants[] = {
    {"LegacyFaithful", [] { return faithful_options(); }, false},
    {"LegacyHardened", [] { return hardened_options(); }},
    {"Token", [] { return token_options(); }},
    {"TokenFenced", with_fencing},
    {"TokenFair", fair},
    {"Redisson", [] { return MutexOptions::redisson_lock(); }},
    {"RedissonSpin", [] { return MutexOptions::redisson_spin_lock(); }},
};

class FrontParity : public ::testing::TestWithParam<std::tuple<Front, Variant>> {
 protected:
  // The test's options: the variant's, with a bound on every wait far above what a test needs.
  MutexOptions options() const {
    MutexOptions options = std::get<1>(GetParam()).options();
    options.acquire_timeout = seconds(30);
    return options;
  }
  bool extends() const { return std::get<1>(GetParam()).extends; }
  std::unique_ptr<FrontLock> make(const std::string& key, MutexOptions options) {
    if (std::get<0>(GetParam()) == Front::blocking) return std::make_unique<BlockingFrontLock>(test_client(), key, options);
    return std::make_unique<AsyncFrontLock>(runner_, client_, key, options);
  }
  std::unique_ptr<FrontLock> make(const std::string& key) { return make(key, options()); }

  // What the locks left to finish in the background runs to its end while the client is still there.
  void TearDown() override { runner_.drain(); }

  LoopRunner runner_;
  AsyncClient client_{runner_.io().get_executor(), test_client()};
};

TEST_P(FrontParity, ATryLockTakesAFreeKeyAndKeepsOthersOut) {
  const std::string key = unique_key();
  auto first = make(key);
  auto second = make(key);
  const Outcome taken = first->try_lock();
  ASSERT_FALSE(taken.error) << taken.error.message();
  ASSERT_TRUE(taken.result);
  EXPECT_TRUE(first->owns_lock());
  EXPECT_FALSE(first->value().empty());
  EXPECT_EQ(raw({"EXISTS", key}).integer, 1);
  const Outcome refused = second->try_lock();
  EXPECT_FALSE(refused.error) << refused.error.message();
  EXPECT_FALSE(refused.result);
  EXPECT_FALSE(second->owns_lock());
  EXPECT_FALSE(first->unlock());
  EXPECT_FALSE(first->owns_lock());
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
  EXPECT_TRUE(second->try_lock().result);
  EXPECT_FALSE(second->unlock());
}

TEST_P(FrontParity, AWaitEndsWithTheLockOnceTheHolderReleases) {
  const std::string key = unique_key();
  auto holder = make(key);
  auto waiter = make(key);
  ASSERT_TRUE(holder->try_lock().result);
  waiter->start_lock_for(seconds(30));
  // Left to run a while, it does not get the lock while the holder holds it.
  waiter->let_run_for(milliseconds(200));
  EXPECT_FALSE(waiter->owns_lock());
  EXPECT_TRUE(holder->owns_lock());
  EXPECT_FALSE(holder->unlock());
  const Outcome waited = waiter->finish_wait();
  EXPECT_FALSE(waited.error) << waited.error.message();
  EXPECT_TRUE(waited.result);
  EXPECT_TRUE(waiter->owns_lock());
  EXPECT_FALSE(waiter->unlock());
}

TEST_P(FrontParity, AWaitForALockNeverFreedGivesUpWithFalse) {
  const std::string key = unique_key();
  auto holder = make(key);
  auto waiter = make(key);
  ASSERT_TRUE(holder->try_lock().result);
  const Outcome waited = waiter->try_lock_for(milliseconds(300));
  EXPECT_FALSE(waited.error) << waited.error.message();
  EXPECT_FALSE(waited.result);
  EXPECT_FALSE(waiter->owns_lock());
  EXPECT_TRUE(holder->owns_lock());
  EXPECT_FALSE(holder->unlock());
}

TEST_P(FrontParity, AnEndedLeaseLetsTheNextOneIn) {
  const std::string key = unique_key();
  MutexOptions short_lease = options();
  short_lease.lease = milliseconds(200);
  short_lease.watchdog.enabled = false;  // Redisson's default renews it
  auto holder = make(key, short_lease);
  auto next = make(key);
  ASSERT_TRUE(holder->try_lock().result);
  const Outcome waited = next->try_lock_for(seconds(10));
  EXPECT_FALSE(waited.error) << waited.error.message();
  EXPECT_TRUE(waited.result) << "the holder's lease ran out; the key should have been taken";
  EXPECT_FALSE(holder->owns_lock());
  EXPECT_FALSE(next->unlock());
}

TEST_P(FrontParity, AReleaseAfterTheKeyWasDeletedReportsTheLeaseLost) {
  const std::string key = unique_key();
  auto mutex = make(key);
  ASSERT_TRUE(mutex->try_lock().result);
  raw({"DEL", key});  // an operator deletes it behind the holder's back
  EXPECT_EQ(mutex->unlock(), make_error_code(Errc::lease_lost));
  EXPECT_FALSE(mutex->owns_lock());
}

TEST_P(FrontParity, ExtendKeepsTheLockOrSaysWhyNot) {
  const std::string key = unique_key();
  auto mutex = make(key);
  ASSERT_TRUE(mutex->try_lock().result);
  const Outcome extended = mutex->extend(seconds(120));
  if (!extends()) {
    EXPECT_EQ(extended.error, make_error_code(Errc::bad_option)) << "its protocol has no extend";
  } else {
    EXPECT_FALSE(extended.error) << extended.error.message();
    EXPECT_TRUE(extended.result);
    EXPECT_GT(raw({"PTTL", key}).integer, 60'000) << "the lease was not reset to 120 s";
    raw({"DEL", key});
    const Outcome lost = mutex->extend(seconds(120));
    EXPECT_FALSE(lost.error) << lost.error.message();
    EXPECT_FALSE(lost.result) << "extended a lock that was gone";
    EXPECT_FALSE(mutex->owns_lock());
  }
  (void)mutex->unlock();
}

TEST_P(FrontParity, EachAcquisitionHasALargerFenceWhereFencingIsOn) {
  const std::string key = unique_key();
  auto mutex = make(key);
  ASSERT_TRUE(mutex->try_lock().result);
  const std::optional<std::uint64_t> first = mutex->fence();
  EXPECT_FALSE(mutex->unlock());
  ASSERT_TRUE(mutex->try_lock().result);
  const std::optional<std::uint64_t> second = mutex->fence();
  EXPECT_FALSE(mutex->unlock());
  EXPECT_EQ(first.has_value(), options().token.fencing);
  if (first && second) {
    EXPECT_GT(*second, *first);
  }
}

TEST_P(FrontParity, TheWatchdogKeepsALeaseAndTellsOfItsLoss) {
  if (!extends()) GTEST_SKIP() << "the faithful legacy preset has no watchdog";
  const std::string key = unique_key();
  MutexOptions watched = options();
  // Renewed every lease/3: a 2 s lease leaves a renewal 1.3 s of slack on a loaded machine (1 s
  // left 0.67 s, and a CI machine running two suites at once lost it).
  watched.lease = milliseconds(2000);
  watched.watchdog.enabled = true;
  auto mutex = make(key, watched);
  std::atomic<bool> told{false};
  mutex->on_lease_lost([&] { told = true; });
  ASSERT_TRUE(mutex->try_lock().result);
  // Renewed past its first lease while held.
  mutex->let_run_for(milliseconds(3500));
  EXPECT_TRUE(mutex->owns_lock());
  EXPECT_EQ(raw({"EXISTS", key}).integer, 1);
  EXPECT_FALSE(told);
  raw({"DEL", key});  // lost behind its back: the next renewal finds it gone
  EXPECT_TRUE(mutex->let_run_until([&] { return told.load(); })) << "the loss was not told";
  EXPECT_FALSE(mutex->owns_lock());
}

INSTANTIATE_TEST_SUITE_P(BothFronts, FrontParity,
                         ::testing::Combine(::testing::Values(Front::blocking, Front::async),
                                            ::testing::ValuesIn(kVariants)),
                         [](const ::testing::TestParamInfo<std::tuple<Front, Variant>>& param_info) {
                           return std::string(std::get<0>(param_info.param) == Front::blocking ? "Blocking" : "Async") +
                                  std::get<1>(param_info.param).name;
                         });

}  // namespace
}  // namespace lockbridge::testing
