// Network faults between lockbridge and the fixture's redis-server, injected by a FaultProxy
// (tools/fault_proxy.hpp): a stalled link, a reply cut in the middle, connections reset
// under the pool and under the release subscriber. Each test asserts what the caller is told and
// what Redis holds afterwards; the only bounds on time are generous ones against a hang.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>

#include "fault_proxy.hpp"
#include "lockbridge/leased_semaphore.hpp"
#include "redis_test_support.hpp"
#include "strategies/companion_keys.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;
using tools::FaultProxy;

// A Client that reaches the fixture's server through `proxy`, with a short command timeout.
Client client_through(const FaultProxy& proxy, milliseconds command_timeout = milliseconds(300)) {
  ClientOptions options;
  options.command_timeout = command_timeout;
  options.connect_timeout = milliseconds(500);
  return Client(proxy.url(), options);
}

// Far beyond every timeout these tests set: reaching it means the call hung.
constexpr auto kHang = seconds(10);

// A waiter in notify mode, alone in its process (no local line), whose wait outlasts the test.
MutexOptions lone_notify_waiter() {
  MutexOptions options = token_options();
  options.wait_mode = WaitMode::notify;
  options.local_queue = false;
  options.acquire_timeout = seconds(30);
  return options;
}

TEST(Faults, ACommandToAStalledServerFailsAtItsCommandTimeout) {
  FaultProxy proxy(tcp_port());
  Mutex mutex(client_through(proxy), unique_key(), one_attempt_options());
  ASSERT_TRUE(mutex.try_lock());
  mutex.unlock();
  proxy.stall();
  const auto started = Clock::now();
  const Error error = expect_error([&] { (void)mutex.try_lock(); });
  EXPECT_EQ(error.errc(), Errc::timeout) << error.what();
  EXPECT_LT(Clock::now() - started, kHang);
  EXPECT_FALSE(mutex.owns_lock());
}

TEST(Faults, TryLockForOnAStalledServerReturnsInsteadOfHanging) {
  FaultProxy proxy(tcp_port());
  const std::string key = unique_key();
  Mutex holder(test_client(), key, token_options());
  ASSERT_TRUE(holder.try_lock());
  Mutex waiter(client_through(proxy), key, token_options());
  EXPECT_FALSE(waiter.try_lock());  // its connection is pooled now, through the proxy
  proxy.stall();
  const auto started = Clock::now();
  try {
    EXPECT_FALSE(waiter.try_lock_for(milliseconds(500)));
  } catch (const Error& error) {
    EXPECT_EQ(error.errc(), Errc::timeout) << error.what();
  }
  EXPECT_LT(Clock::now() - started, kHang);
  EXPECT_FALSE(waiter.owns_lock());
  EXPECT_EQ(raw({"GET", key}).str, holder.value()) << "the holder keeps its lock";
  holder.unlock();
}

// A slow link is not a broken one: delayed below the command timeout, a lock cycle works; delayed
// beyond it, the command fails as a timeout; healed, it works again.
TEST(Faults, ADelayedLinkWorksUntilTheDelayPassesTheCommandTimeout) {
  FaultProxy proxy(tcp_port());
  const std::string key = unique_key();
  MutexOptions options = one_attempt_options();
  options.lease = seconds(2);  // what a late acquire can cost, below
  Mutex mutex(client_through(proxy, milliseconds(400)), key, options);
  proxy.delay(milliseconds(50));
  ASSERT_TRUE(mutex.try_lock());
  EXPECT_EQ(raw({"GET", key}).str, mutex.value());
  mutex.unlock();
  EXPECT_FALSE(mutex.last_error());
  proxy.delay(milliseconds(1000));
  const Error error = expect_error([&] { (void)mutex.try_lock(); });
  EXPECT_EQ(error.errc(), Errc::timeout) << error.what();
  EXPECT_FALSE(mutex.owns_lock());
  proxy.heal();
  // The delayed acquire may still land after the client gave up: it holds the key until its lease
  // ends (docs/guarantees.md); the next attempt works once the key is free.
  ASSERT_TRUE(eventually([&] { return mutex.try_lock(); }, seconds(30)));
  mutex.unlock();
}

TEST(Faults, AReplyCutInTheMiddleIsAnErrorAndLeavesNoLockHeld) {
  FaultProxy proxy(tcp_port());
  const std::string key = unique_key();
  Mutex mutex(client_through(proxy), key, one_attempt_options());
  ASSERT_TRUE(mutex.try_lock());  // a pooled connection exists
  mutex.unlock();
  proxy.cut_after(2);  // "+O" of "+OK\r\n": the SET NX ran, its reply never arrives whole
  const Error error = expect_error([&] { (void)mutex.try_lock(); });
  EXPECT_THAT(error.errc(), ::testing::AnyOf(Errc::io, Errc::timeout)) << error.what();
  EXPECT_FALSE(mutex.owns_lock());
  // The lost-reply path undid the acquisition it could not confirm: nobody is left holding it.
  EXPECT_TRUE(eventually([&] { return raw({"EXISTS", key}).integer == 0; })) << raw({"GET", key}).str;
  ASSERT_TRUE(mutex.try_lock()) << "the next attempt takes the free lock";
  mutex.unlock();
}

// Permits taken together whose reply is lost are given back together (one all-or-none script,
// as Java gives back its ids then): none is gone, even without a lease to end.
TEST(Faults, LeasedPermitsWhoseAcquireReplyIsCutAreGivenBack) {
  FaultProxy proxy(tcp_port());
  const std::string key = unique_key();
  LeasedSemaphore permits(client_through(proxy), key);
  ASSERT_TRUE(permits.try_set_permits(3));
  // Both scripts cached: the cut acquire below runs, rather than failing with NOSCRIPT.
  ASSERT_EQ(permits.release(permits.try_acquire(2, LeasedSemaphore::kNoLease)), 2);
  proxy.cut_after(2);  // "*1" of "*1\r\n:1\r\n": the permits were taken, the reply never arrives whole
  const Error error = expect_error([&] { (void)permits.try_acquire(2, LeasedSemaphore::kNoLease); });
  EXPECT_THAT(error.errc(), ::testing::AnyOf(Errc::io, Errc::timeout)) << error.what();
  EXPECT_EQ(raw({"GET", key}).str, "3") << "a permit taken under the lost reply is gone";
  EXPECT_EQ(raw({"ZCARD", LeasedSemaphore::leases_name(key)}).integer, 0);
}

TEST(Faults, APooledConnectionBrokenByAResetIsReplacedNotReused) {
  FaultProxy proxy(tcp_port());
  Mutex mutex(client_through(proxy), unique_key(), one_attempt_options());
  ASSERT_TRUE(mutex.try_lock());
  mutex.unlock();
  const int before = proxy.accepted();
  proxy.reset();
  ASSERT_TRUE(mutex.try_lock()) << "a reset idle connection must not fail the next call";
  mutex.unlock();
  EXPECT_GT(proxy.accepted(), before) << "a fresh connection replaced the reset one";
  EXPECT_FALSE(mutex.last_error());
}

TEST(Faults, TheReleaseSubscriberSubscribesAgainAfterAResetAndItsWaiterWakes) {
  FaultProxy proxy(tcp_port());
  const std::string key = unique_key();
  Mutex holder(test_client(), key, token_options());
  ASSERT_TRUE(holder.try_lock());
  const MutexOptions options = lone_notify_waiter();
  const Client waiter_client = client_through(proxy, seconds(2));
  Mutex waiter(waiter_client, key, options);
  auto waited = std::async(std::launch::async, [&] { waiter.lock(); });
  const auto subscribers = [&] { return release_subscribers(key); };
  // Reset while the waiter sleeps (subscribed and queued), and only the subscriber's connection:
  // the waiter's own attempt after the wake-up must not meet a pooled connection whose reset is
  // still on its way (an attempt whose reply is lost fails the call, "outcome unknown", by design;
  // the pool's own recovery is APooledConnectionBrokenByAResetIsReplacedNotReused).
  ASSERT_TRUE(eventually([&] {
    return subscribers() == 1 && raw({"LLEN", detail::waiter_queue(key)}).integer == 1;
  })) << "the waiter never subscribed and queued";
  const int before = proxy.accepted();
  proxy.reset_where("SSUBSCRIBE");
  // Subscribed again, on a new connection (the waiter's heartbeat attempts would wake it too, but
  // later: this is the subscriber's own recovery).
  ASSERT_TRUE(eventually([&] { return proxy.accepted() > before && subscribers() == 1; }))
      << "the subscriber did not subscribe again";
  holder.unlock();
  ASSERT_EQ(waited.wait_for(seconds(30)), std::future_status::ready) << "the waiter never woke";
  waited.get();
  EXPECT_TRUE(waiter.owns_lock());
  waiter.unlock();
}

// A waiter's connection lost during one of its attempts (here the attempt's reply is cut after
// its first byte: the script ran, its outcome is unknown): the wait ends with that attempt's error,
// as any failed attempt's. The waiter leaves its place in the queue, so the holder's release frees
// the lock instead of granting it to a waiter that has gone.
TEST(Faults, AWaiterWhoseAttemptLosesItsConnectionFailsAndLeavesTheQueue) {
  FaultProxy proxy(tcp_port());
  const std::string key = unique_key();
  Mutex holder(test_client(), key, token_options());
  ASSERT_TRUE(holder.try_lock());
  MutexOptions options = lone_notify_waiter();
  options.fair_waiter_timeout = seconds(3);  // the waiter asks again at least every second
  Mutex waiter(client_through(proxy, seconds(2)), key, options);
  auto waited = std::async(std::launch::async, [&] { waiter.lock(); });
  ASSERT_TRUE(eventually([&] {
    return release_subscribers(key) == 1 && raw({"LLEN", detail::waiter_queue(key)}).integer == 1;
  })) << "the waiter never subscribed and queued";
  // Subscribed, and the lock stays held, so nothing is published: the next bytes the server sends
  // through the proxy answer the waiter's next attempt.
  proxy.cut_after(1);
  ASSERT_EQ(waited.wait_for(kHang), std::future_status::ready) << "the wait did not end";
  const Error error = expect_error([&] { waited.get(); });
  EXPECT_THAT(error.errc(), ::testing::AnyOf(Errc::io, Errc::timeout)) << error.what();
  EXPECT_FALSE(waiter.owns_lock());
  // Left before lock() threw: a place left behind would stay live for seconds (its deadline).
  EXPECT_EQ(raw({"LLEN", detail::waiter_queue(key)}).integer, 0) << "the waiter left its place behind";
  holder.unlock();
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0) << "the release granted the lock to a waiter that had gone";
  EXPECT_EQ(raw({"EXISTS", detail::grant_record(key)}).integer, 0);
}

// The watchdog's renewals meet the stall: each waits for Redis no longer than the first lease end
// (not its 5 s command timeout), so the holder is told the lock is lost as its lease runs out, and
// a waiter on a healthy link gets the lock after that, with a larger fence.
TEST(Faults, AHolderBehindAStalledLinkIsToldAtItsLeaseEndAndAWaiterTakesOverWithALargerFence) {
  FaultProxy proxy(tcp_port());
  const std::string key = unique_key();
  MutexOptions options = token_options();
  options.token.fencing = true;
  options.lease = milliseconds(900);
  options.watchdog.enabled = true;
  Mutex holder(client_through(proxy, seconds(5)), key, options);
  std::atomic<bool> told{false};
  std::string why;
  holder.on_lease_lost([&](const Error& error) {
    why = error.what();
    told = true;
  });
  ASSERT_TRUE(holder.try_lock());
  const std::uint64_t first_fence = holder.fence().value();
  proxy.stall();  // from now on the holder's renewals go nowhere

  MutexOptions waiting = options;
  waiting.watchdog.enabled = false;
  Mutex waiter(test_client(), key, waiting);
  ASSERT_TRUE(waiter.try_lock_for(seconds(30))) << "the stalled holder's lease never ran out";
  // Told by the lease end, which is before the waiter's takeover; a second of slack for this
  // machine's scheduling, far below the 5 s a renewal stuck until its command timeout would take.
  EXPECT_TRUE(eventually([&] { return told.load(); }, seconds(1))) << "the holder was not told in time";
  EXPECT_FALSE(holder.owns_lock());
  EXPECT_GT(waiter.fence().value(), first_fence);
  EXPECT_EQ(raw({"GET", key}).str, waiter.value());
  if (told) {
    EXPECT_THAT(why, ::testing::HasSubstr("lease")) << why;
  }
  waiter.unlock();
  proxy.heal();
  holder.unlock();  // finds the key gone or another's: nothing deleted
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

}  // namespace
}  // namespace lockbridge::testing
