// Lease safety against the fixture's redis-server: the watchdog, the loss notice, fencing tokens
// and reentrant holds. Assertions are about behaviour (the key still ours after several leases,
// the holder told, a later fence larger, round trips per batch), never about how long anything
// took.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cluster/key_slot.hpp"
#include "redis/connection.hpp"
#include "redis/script_runner.hpp"
#include "redis_test_support.hpp"
#include "strategies/companion_keys.hpp"
#include "topology.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::milliseconds;

MutexOptions with_watchdog(MutexOptions options, milliseconds lease) {
  options.lease = lease;
  options.watchdog.enabled = true;
  return options;
}

// What a loss handler saw, safe to read from the test thread.
struct LossLog {
  std::mutex mutex;
  std::vector<Error> errors;
  void record(const Error& error) {
    std::lock_guard lock(mutex);
    errors.push_back(error);
  }
  std::size_t count() {
    std::lock_guard lock(mutex);
    return errors.size();
  }
  std::string first_message() {
    std::lock_guard lock(mutex);
    return errors.empty() ? std::string() : std::string(errors.front().what());
  }
};

class Watchdog : public ::testing::TestWithParam<StrategyKind> {
 protected:
  MutexOptions options(milliseconds lease) const {
    return with_watchdog(GetParam() == StrategyKind::token ? token_options() : hardened_options(), lease);
  }
};

TEST_P(Watchdog, KeepsTheLockPastSeveralLeases) {
  const std::string key = unique_key();
  Client client = test_client();
  // A lease long enough that a loaded machine (sanitizers, parallel tests) cannot starve the
  // watchdog past it, and a hold of several leases.
  Mutex mutex(client, key, options(milliseconds(1500)));
  ASSERT_TRUE(mutex.try_lock());
  // Without renewals the key (lease + grace for hardened legacy) would be long gone.
  std::this_thread::sleep_for(milliseconds(4500));
  EXPECT_TRUE(mutex.owns_lock());
  EXPECT_GT(mutex.valid_for(), milliseconds(0));
  EXPECT_FALSE(mutex.lease_token().stop_requested());
  // The renewals wrote what the Mutex now knows (a new stamp for legacy, the same token for token).
  // A renewal may land between the two reads; the next pair agrees.
  EXPECT_TRUE(eventually([&] { return raw({"GET", key}).str == mutex.value(); }));
  EXPECT_GT(raw({"PTTL", key}).integer, 0);
  mutex.unlock();
  EXPECT_TRUE(raw({"GET", key}).is_nil());
  EXPECT_TRUE(mutex.lease_token().stop_requested()) << "released: work under the lock should stop";
}

TEST_P(Watchdog, TellsTheHolderWhenTheKeyIsDeletedBehindItsBack) {
  const std::string key = unique_key();
  Client client = test_client();
  // The renewal must come before the lease ends to find the key gone (rather than the lease run
  // out): 2 s leaves it 1.3 s late at most.
  Mutex mutex(client, key, options(milliseconds(2000)));
  LossLog log;
  mutex.on_lease_lost([&log](const Error& error) { log.record(error); });
  ASSERT_TRUE(mutex.try_lock());
  const std::stop_token token = mutex.lease_token();
  raw({"DEL", key});
  ASSERT_TRUE(eventually([&] { return log.count() > 0; })) << "the next renewal must find the key gone";
  EXPECT_TRUE(token.stop_requested());
  EXPECT_EQ(log.count(), 1U);
  EXPECT_NE(log.first_message().find("no longer holds our value"), std::string::npos) << log.first_message();
  EXPECT_FALSE(mutex.owns_lock());
  EXPECT_EQ(mutex.valid_for(), milliseconds(0));
  // Someone else takes the free key; the lost holder's unlock must not touch it.
  raw({"SET", key, "someone-else"});
  mutex.unlock();
  EXPECT_EQ(raw({"GET", key}).str, "someone-else");
  // And the Mutex can lock again once the key is free.
  raw({"DEL", key});
  EXPECT_TRUE(mutex.try_lock());
}

TEST_P(Watchdog, StopsRenewingAtMaxHoldAndTheLeaseRunsOut) {
  const std::string key = unique_key();
  Client client = test_client();
  // max_hold is shorter than one lease, so whenever the watchdog's first turn comes (a loaded
  // machine may delay it by hundreds of milliseconds) it finds max_hold reached or near, and the
  // loss notice names max_hold rather than a renewal that came too late.
  MutexOptions stuck = options(milliseconds(1000));
  stuck.watchdog.max_hold = milliseconds(300);
  stuck.legacy.safety_ttl_grace = milliseconds(0);
  Mutex mutex(client, key, stuck);
  LossLog log;
  mutex.on_lease_lost([&log](const Error& error) { log.record(error); });
  ASSERT_TRUE(mutex.try_lock());
  ASSERT_TRUE(eventually([&] { return log.count() > 0; })) << "a holder that never unlocks must lose the lock";
  EXPECT_NE(log.first_message().find("max_hold"), std::string::npos) << log.first_message();
  EXPECT_TRUE(eventually([&] { return raw({"EXISTS", key}).integer == 0; })) << "the key's TTL must run out in Redis";
}

// The renewal that max_hold cuts short carries the lease to the hold's deadline; later ones only
// check that the lock is still ours, at the usual cadence. A watchdog that asked again every third
// of what was left renewed some two hundred times on the way. Renewals come every lease/6 to
// lease/3 (fewer when the machine is slow): seven or so here.
TEST_P(Watchdog, RenewalsCutShortByMaxHoldKeepTheirCadence) {
  const std::string key = unique_key();
  Client client = test_client();  // its own: its renewals are this lock's alone
  MutexOptions held = options(milliseconds(1200));
  held.watchdog.max_hold = milliseconds(2000);
  held.legacy.safety_ttl_grace = milliseconds(0);
  Mutex mutex(client, key, held);
  LossLog log;
  mutex.on_lease_lost([&log](const Error& error) { log.record(error); });
  ASSERT_TRUE(mutex.try_lock());
  ASSERT_TRUE(eventually([&] { return log.count() > 0; })) << "a holder past max_hold must lose the lock";
  EXPECT_NE(log.first_message().find("max_hold"), std::string::npos) << log.first_message();
  EXPECT_LE(client.stats().renewals, 12u);
}

INSTANTIATE_TEST_SUITE_P(TokenAndHardenedLegacy, Watchdog, ::testing::Values(StrategyKind::token, StrategyKind::legacy),
                         [](const auto& param_info) { return std::string(to_string(param_info.param)); });

TEST(LeaseLoss, WithoutAWatchdogTheHolderIsToldWhenTheLeaseRunsOut) {
  const std::string key = unique_key();
  Client client = test_client();
  MutexOptions options = token_options();
  options.lease = milliseconds(200);
  Mutex mutex(client, key, options);
  LossLog log;
  mutex.on_lease_lost([&log](const Error& error) { log.record(error); });
  ASSERT_TRUE(mutex.try_lock());
  ASSERT_TRUE(eventually([&] { return mutex.lease_token().stop_requested(); }));
  // The notice runs on the renewal thread right after the stop request, not before it.
  ASSERT_TRUE(eventually([&] { return log.count() > 0; }));
  EXPECT_EQ(log.count(), 1U);
  EXPECT_NE(log.first_message().find("ran out"), std::string::npos) << log.first_message();
  EXPECT_FALSE(mutex.owns_lock());
}

TEST(LeaseLoss, AnExtendThatFindsTheLockGoneGivesTheLossNotice) {
  const std::string key = unique_key();
  Client client = test_client();
  Mutex mutex(client, key, token_options());
  LossLog log;
  mutex.on_lease_lost([&log](const Error& error) { log.record(error); });
  ASSERT_TRUE(mutex.try_lock());
  raw({"DEL", key});
  EXPECT_FALSE(mutex.extend(milliseconds(5000)));
  EXPECT_EQ(log.count(), 1U);
  EXPECT_EQ(mutex.last_error(), make_error_code(Errc::lease_lost));
  EXPECT_TRUE(mutex.lease_token().stop_requested());
}

TEST(LeaseLoss, TheFaithfulPresetHasNoWatchdog) {
  Client client = test_client();
  const Error error =
      expect_error([&] { Mutex(client, unique_key(), with_watchdog(faithful_options(), milliseconds(1000))); });
  EXPECT_EQ(error.errc(), Errc::bad_option);
}

// Many locks of one Client are renewed together: one round trip per batch, not one per lock.
TEST(LeaseLoss, TheWatchdogRenewsManyLocksInBatches) {
  constexpr int kLocks = 2000;
  Client client = test_client(ClientOptions{.pool_size = 2});
  std::vector<Mutex> locks;
  locks.reserve(kLocks);
  for (int i = 0; i < kLocks; ++i) {
    locks.emplace_back(client, unique_key(std::to_string(i)), with_watchdog(token_options(), milliseconds(1500)));
    ASSERT_TRUE(locks.back().try_lock());
  }
  const auto before = client.stats().round_trips;
  // Two leases: without renewals every key's TTL would have run out; with them each lock is
  // renewed about six times.
  std::this_thread::sleep_for(milliseconds(3000));
  const auto renewal_round_trips = client.stats().round_trips - before;
  for (Mutex& mutex : locks) ASSERT_TRUE(mutex.owns_lock()) << mutex.key();
  EXPECT_EQ(raw({"EXISTS", locks.front().key()}).integer, 1);
  EXPECT_EQ(raw({"EXISTS", locks.back().key()}).integer, 1);
  EXPECT_GT(renewal_round_trips, 0U);
  // 12,000 renewals; one round trip each would be 12,000.
  EXPECT_LT(renewal_round_trips, static_cast<std::uint64_t>(kLocks) / 10) << renewal_round_trips;
}

// A server that lost its script cache (restart, SCRIPT FLUSH) answers a whole renewal batch with
// NOSCRIPT: the batch is sent again as EVAL in one pipeline, not call by call.
TEST(LeaseLoss, ALostScriptCacheCostsABatchTwoRoundTripsNotOnePerCall) {
  // A server of its own: on the shared one, a test running beside this one may load the script
  // again between the flush and the batch.
  const auto server = ServerProcess::start_server();
  std::atomic<std::uint64_t> round_trips{0};
  detail::ScriptCache cache;
  detail::Connection connection(parse_redis_url("redis://" + server->address()), ClientOptions{}, round_trips);
  std::vector<detail::ScriptCall> calls;
  for (int i = 0; i < 100; ++i) calls.push_back({&detail::kCompareAndPexpire, {unique_key()}, {"not-ours", "1000"}});
  (void)detail::run_scripts(connection, cache, calls);  // the server has the script from here on
  ASSERT_EQ(server->command({"SCRIPT", "FLUSH"}), "OK");
  const auto before = round_trips.load();
  const auto replies = detail::run_scripts(connection, cache, calls);
  EXPECT_EQ(round_trips.load() - before, 2U) << "the batch, then the batch again as EVAL";
  ASSERT_EQ(replies.size(), calls.size());
  for (const auto& reply : replies) EXPECT_EQ(reply->type, REDIS_REPLY_INTEGER);
}

TEST(Fencing, ALaterAcquisitionCarriesALargerFence) {
  const std::string key = unique_key();
  Client client = test_client();
  MutexOptions options = token_options();
  options.token.fencing = true;
  Mutex first(client, key, options);
  Mutex second(client, key, options);
  ASSERT_TRUE(first.try_lock());
  ASSERT_TRUE(first.fence().has_value());
  const std::uint64_t earlier = *first.fence();
  EXPECT_FALSE(second.try_lock());
  first.unlock();
  ASSERT_TRUE(second.try_lock());
  ASSERT_TRUE(second.fence().has_value());
  EXPECT_GT(*second.fence(), earlier);
  EXPECT_EQ(first.fence(), earlier) << "the last acquisition's fence stays readable";
  second.unlock();
}

TEST(Fencing, WithoutFencingThereIsNoFence) {
  Client client = test_client();
  Mutex mutex(client, unique_key(), token_options());
  ASSERT_TRUE(mutex.try_lock());
  EXPECT_FALSE(mutex.fence().has_value());
}

TEST(Fencing, TheCounterLivesInTheLocksHashSlotAndHasNoTtl) {
  const std::string key = "{" + unique_key() + "}:lock";
  Client client = test_client();
  MutexOptions options = token_options();
  options.token.fencing = true;
  Mutex mutex(client, key, options);
  ASSERT_TRUE(mutex.try_lock());
  const std::string counter = detail::fence_counter(key);
  EXPECT_EQ(detail::hashed_part(counter), detail::hashed_part(key));
  EXPECT_EQ(raw({"GET", counter}).str, std::to_string(*mutex.fence()));
  EXPECT_EQ(raw({"PTTL", counter}).integer, -1) << "a counter whose TTL ran out would restart and break the order";
}

TEST(Reentrant, TheLastUnlockReleases) {
  const std::string key = unique_key();
  Client client = test_client();
  MutexOptions options = token_options();
  options.reentrant = true;
  Mutex mutex(client, key, options);
  mutex.lock();
  const std::string value = mutex.value();
  mutex.lock();
  EXPECT_TRUE(mutex.try_lock());
  EXPECT_EQ(mutex.value(), value) << "a nested hold writes nothing";
  mutex.unlock();
  mutex.unlock();
  EXPECT_EQ(raw({"GET", key}).str, value) << "still held: one hold left";
  EXPECT_TRUE(mutex.owns_lock());
  mutex.unlock();
  EXPECT_TRUE(raw({"GET", key}).is_nil());
  EXPECT_FALSE(mutex.owns_lock());
}

TEST(Reentrant, WithoutItASecondLockIsRefused) {
  Client client = test_client();
  Mutex mutex(client, unique_key(), token_options());
  mutex.lock();
  EXPECT_EQ(expect_error([&] { mutex.lock(); }).errc(), Errc::bad_option);
}

}  // namespace
}  // namespace lockbridge::testing
