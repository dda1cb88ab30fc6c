// Direct grant (docs/design.md §10.6): a release makes the starving head of the queue the holder
// in its own script, and the message that wakes the waiter says it holds the lock. Against the
// fixture's redis-server, for the token strategy (notify mode's starving waiter, and fair mode's
// every waiter) and the hardened legacy preset in its three formats. Clients stand for processes
// (local_queue off); the killed waiter is a process of its own. Every assertion is about who holds
// the lock and what Redis or the wire shows, never about how long anything took.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <optional>
#include <system_error>
#include <stop_token>
#include <sstream>
#include <string>
#include <vector>

#include "lockbridge/asio.hpp"
#include "lockbridge/legacy_value.hpp"
#include "loop_runner.hpp"
#include "redis_test_support.hpp"
#include "strategies/companion_keys.hpp"
#include "strategies/scripts.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

struct GrantVariant {
  std::string name;
  MutexOptions base;
  bool fair = false;
};

// A waiter of the variant that starves at once (notify mode, 1 ms) or queues in fair mode, and
// keeps its place without a heartbeat in the test's time (a queued waiter asks again only every
// fair_waiter_timeout / 3): whatever it sends in a test, the test caused.
MutexOptions waiter_options(const GrantVariant& variant) {
  MutexOptions options = variant.base;
  options.wait_mode = variant.fair ? WaitMode::fair : WaitMode::notify;
  options.starvation_after = milliseconds(1);
  options.local_queue = false;  // these waiters stand for other processes
  options.acquire_timeout = seconds(30);
  options.fair_waiter_timeout = seconds(90);
  return options;
}

std::string queue_of(const GrantVariant& variant, const std::string& key) {
  return variant.fair ? detail::fair_queue(key) : detail::waiter_queue(key);
}
std::string times_of(const GrantVariant& variant, const std::string& key) {
  return variant.fair ? detail::fair_deadlines(key) : detail::waiter_times(key);
}

// Whether the first waiter queued on `key` starves by the server's clock (its entry's second
// field; fair mode's waiters starve at once).
bool first_waiter_starves(const GrantVariant& variant, const std::string& key) {
  const Reply first = raw({"LINDEX", queue_of(variant, key), "0"});
  if (first.is_nil()) return false;
  const Reply times = raw({"HGET", times_of(variant, key), first.str});
  if (times.is_nil()) return false;
  const auto space = times.str.find(' ');
  if (space == std::string::npos) return false;
  return server_ms() >= std::stoll(times.str.substr(space + 1));
}

// A waiter's Client: its subscription is confirmed before its queued attempt however loaded the
// machine (the wait for the confirmation is bounded by the command timeout), so the release's
// message reaches a waiter that listens, and nothing else of the waiter's is in flight then.
Client listening_client() {
  ClientOptions options;
  options.command_timeout = seconds(20);
  return test_client(options);
}

// Releases `holder`'s lock; whether the lock() that `waited` runs then returned (within a bound).
bool hand_over(Mutex& holder, std::future<void>& waited) {
  holder.unlock();
  if (waited.wait_for(seconds(30)) != std::future_status::ready) return false;
  waited.get();
  return true;
}

// A holder and a waiter on one key, each with its own Client (two processes, as far as Redis can
// tell): the holder takes the lock, and the waiter waits in lock() from then on.
struct HolderAndWaiter {
  HolderAndWaiter(const std::string& key, const MutexOptions& options)
      : holder(holder_client, key, options), waiter(waiter_client, key, options) {
    held = holder.try_lock();
    if (held) waited = std::async(std::launch::async, [this] { waiter.lock(); });
  }
  bool hand_over() { return testing::hand_over(holder, waited); }

  Client holder_client = test_client();
  Client waiter_client = listening_client();
  Mutex holder;
  Mutex waiter;
  bool held = false;
  std::future<void> waited;
};

// Whether the first waiter queued on `key` starves and has made its second attempt, after which
// it sleeps until a release (or a heartbeat, far off here): the entry's grant spec carries the
// attempt's number. A notify-mode waiter's second attempt is its first queued one, after its
// subscription was confirmed; a fair-mode waiter queues with its first, subscribes, and attempts
// once more. Nothing of the waiter's is in flight once this holds.
bool waiter_settled(const GrantVariant& variant, const std::string& key) {
  if (!first_waiter_starves(variant, key)) return false;
  const Reply first = raw({"LINDEX", queue_of(variant, key), "0"});
  const Reply entry = raw({"HGET", times_of(variant, key), first.str});
  std::istringstream fields(entry.str);
  std::string deadline, starving_at, tag;
  fields >> deadline >> starving_at >> tag;
  return tag == "2";
}

class Grant : public ::testing::TestWithParam<GrantVariant> {};

// The waiter returns from lock() holding the lock, and sends nothing for it: MONITOR shows the
// release's one script call writing the waiter's value, and no command of the waiter's.
// A waiter whose next attempt by its retry policy is a minute away: it waits for its subscription
// to be confirmed (up to its command timeout) before its last attempt, however slow the machine
// (a sanitizer build), so it has made exactly two attempts when it sleeps (waiter_settled).
MutexOptions settling_waiter(const GrantVariant& variant) {
  MutexOptions options = waiter_options(variant);
  options.retry = RetryPolicy::fixed_retries(5, seconds(60));
  return options;
}

TEST_P(Grant, TheGrantedWaiterHoldsWithoutAFurtherCommand) {
  const std::string key = unique_key();
  const MutexOptions options = settling_waiter(GetParam());
  HolderAndWaiter pair(key, options);
  ASSERT_TRUE(pair.held);
  Mutex& waiter = pair.waiter;
  ASSERT_TRUE(eventually([&] { return waiter_settled(GetParam(), key); })) << "the waiter never queued";
  // Its subscription was confirmed before its last attempt (wait_loop), so the message is heard.
  CommandRecorder recorder(key, /*containing=*/true);
  recorder.start();
  const auto before = pair.waiter_client.stats().round_trips;
  ASSERT_TRUE(pair.hand_over());
  const auto after = pair.waiter_client.stats().round_trips;
  const std::vector<std::vector<std::string>> commands = recorder.stop();
  EXPECT_TRUE(waiter.owns_lock());
  EXPECT_EQ(after, before) << "the granted waiter made a round trip before it held the lock";
  // The release is one script call: EVALSHA, or EVALSHA and EVAL when the server's script cache
  // was flushed (another test may do that). Any other script would be the waiter's attempt.
  const std::string release_sha = script_sha1(detail::kCompareAndHandOff.body);
  int releases = 0;
  std::string others;
  bool wrote_waiters_value = false;
  for (const auto& command : commands) {
    if (command.front() == "EVALSHA" || command.front() == "EVAL") {
      const bool release = command.size() > 1 && (command.front() == "EVALSHA" ? command[1] == release_sha
                                                                              : command[1] == detail::kCompareAndHandOff.body);
      if (release) {
        ++releases;
      } else {
        others += "\n  " + command.front() + " " + command.at(1).substr(0, 40);
      }
    }
    if (command.size() >= 3 && command[0] == "SET" && command[1] == key && command[2] == waiter.value())
      wrote_waiters_value = true;
  }
  EXPECT_GE(releases, 1) << "the holder's release script did not run";
  EXPECT_TRUE(others.empty()) << "scripts other than the holder's release ran:" << others;
  EXPECT_TRUE(wrote_waiters_value) << "the release script did not write the waiter's value";
  EXPECT_EQ(raw({"GET", key}).str, waiter.value());
  const std::int64_t pttl = raw({"PTTL", key}).integer;
  EXPECT_GT(pttl, 0);
  EXPECT_LE(pttl, options.grant_lease.count() + options.legacy.safety_ttl_grace.count())
      << "a grant lives grant_lease (plus legacy's safety grace) until the hold lasts";
  waiter.unlock();
  EXPECT_TRUE(raw({"GET", key}).is_nil());
  EXPECT_EQ(raw({"EXISTS", detail::grant_record(key), queue_of(GetParam(), key), times_of(GetParam(), key)}).integer, 0)
      << "a served grant leaves no trace in Redis";
}

// A waiter that misses the message (it cannot subscribe: the ACL denies it) still finds its grant
// with its next attempt; one that gives up first passes the lock on at once.
TEST_P(Grant, AWaiterThatGaveUpAfterItsGrantLeavesTheLockFree) {
  const std::string key = unique_key();
  MutexOptions options = waiter_options(GetParam());
  options.retry = RetryPolicy::fixed_retries(5, seconds(60));  // its next attempt: not in this test
  Client holder_client = test_client();
  Mutex holder(holder_client, key, options);
  ASSERT_TRUE(holder.try_lock());
  const AclUser deaf({"+@all", "-ssubscribe", "-subscribe"});
  Client waiter_client(deaf.url());
  Mutex waiter(waiter_client, key, options);
  std::stop_source stop;
  auto waited = std::async(std::launch::async, [&] { return waiter.try_lock_for(seconds(30), stop.get_token()); });
  ASSERT_TRUE(eventually([&] { return first_waiter_starves(GetParam(), key); })) << "the waiter never queued";
  const std::string waiter_id = raw({"LINDEX", queue_of(GetParam(), key), "0"}).str;
  holder.unlock();
  ASSERT_TRUE(raw({"GET", detail::grant_record(key)}).str.starts_with(waiter_id + " "))
      << "the release did not grant the lock to the waiter";
  stop.request_stop();
  ASSERT_EQ(waited.wait_for(seconds(30)), std::future_status::ready);
  EXPECT_FALSE(waited.get()) << "a stopped wait does not take its grant";
  EXPECT_TRUE(raw({"GET", key}).is_nil()) << "the waiter that gave up kept the lock granted to it";
  EXPECT_EQ(raw({"EXISTS", detail::grant_record(key)}).integer, 0);
  EXPECT_EQ(raw({"LLEN", queue_of(GetParam(), key)}).integer, 0);
}

// A granted waiter that was killed blocks the next one no longer than the grant lease: the key a
// release writes for it lives that long at most, and the next waiter then takes the lock.
TEST_P(Grant, AGrantedWaiterKilledStallsTheQueueNoLongerThanTheGrantLease) {
  const std::string key = unique_key();
  MutexOptions options = waiter_options(GetParam());
  // Long enough that a sanitized run's slow test thread still reads the granted key before it
  // runs out.
  options.grant_lease = milliseconds(2000);
  Client holder_client = test_client();
  Mutex holder(holder_client, key, options);
  ASSERT_TRUE(holder.try_lock());
  std::string lock_args = " --lease 60000 --grant-lease 2000";
  if (options.strategy == StrategyKind::legacy) {
    const LegacyFormat format = options.legacy.format;
    lock_args += std::string(" --strategy legacy --preset hardened --format ") +
                 (format == LegacyFormat::epoch_seconds ? "seconds"
                  : format == LegacyFormat::uuid_ms     ? "uuid-ms"
                                                        : "ms");
  }
  lock_args += GetParam().fair ? " --wait-mode fair" : " --wait-mode notify --starvation-after 1";
  BackgroundCli doomed("hold '" + key + "' --json --wait 60000 --for 60000" + lock_args);
  ASSERT_TRUE(eventually([&] { return first_waiter_starves(GetParam(), key); }))
      << "the doomed waiter never queued: " << doomed.errors();
  ASSERT_EQ(::kill(doomed.pid(), SIGKILL), 0);
  (void)doomed.finish();
  holder.unlock();  // grants the lock to the dead waiter, whose deadline has not passed
  const std::int64_t pttl = raw({"PTTL", key}).integer;
  EXPECT_GT(pttl, 0) << "the release did not grant the lock to the (not yet known dead) waiter";
  EXPECT_LE(pttl, 2000 + options.legacy.safety_ttl_grace.count()) << "a grant outlives its grant lease";
  if (options.strategy == StrategyKind::legacy) {
    const auto stamp = parse_legacy_value(raw({"GET", key}).str, options.legacy.format);
    ASSERT_TRUE(stamp);
    // A stamp in seconds is rounded up to the next whole second.
    const std::int64_t rounding = options.legacy.format == LegacyFormat::epoch_seconds ? 1000 : 1;
    EXPECT_LE(stamp->expiry_ms, server_ms() + 2000 + rounding) << "the granted stamp outlives the grant lease";
  }
  Client next_client = test_client();
  Mutex next(next_client, key, options);
  EXPECT_TRUE(next.try_lock_for(seconds(30))) << "a dead granted waiter must not block the lock";
  next.unlock();
}

// A grant holds the lock for grant_lease at most; a hold that lasts is topped up to the lease it
// asked for, once, by the Client's renewal thread, and keeps the lock.
TEST_P(Grant, AHoldThatLastsIsToppedUpToItsLease) {
  const std::string key = unique_key();
  MutexOptions options = waiter_options(GetParam());
  // The top-up is due halfway through what is left of the grant: 3 s leaves a late renewal room.
  options.grant_lease = milliseconds(3000);
  options.lease = seconds(60);
  HolderAndWaiter pair(key, options);
  ASSERT_TRUE(pair.held);
  Mutex& waiter = pair.waiter;
  ASSERT_TRUE(eventually([&] { return first_waiter_starves(GetParam(), key); })) << "the waiter never queued";
  ASSERT_TRUE(pair.hand_over());
  EXPECT_LE(waiter.valid_for(), milliseconds(3000)) << "a grant's lease is grant_lease at most";
  ASSERT_TRUE(eventually([&] { return raw({"PTTL", key}).integer > 10000; })) << "the grant was never topped up";
  // The holder learns of it once the renewal's reply is read, just after Redis ran it.
  EXPECT_TRUE(eventually([&] { return waiter.valid_for() > seconds(10); }))
      << "the holder does not know of its topped-up lease";
  EXPECT_TRUE(waiter.owns_lock());
  EXPECT_EQ(raw({"GET", key}).str, waiter.value());
  waiter.unlock();
  EXPECT_TRUE(raw({"GET", key}).is_nil());
}

// The event-driven front waits in the same loop: a coroutine granted the lock holds it with no
// round trip of its own either.
TEST_P(Grant, AnAsyncWaiterIsGrantedTheLockWithoutAFurtherCommand) {
  const std::string key = unique_key();
  const MutexOptions options = settling_waiter(GetParam());
  Client holder_client = test_client();
  Mutex holder(holder_client, key, options);
  ASSERT_TRUE(holder.try_lock());
  LoopRunner runner;
  AsyncClient client(runner.io().get_executor(), listening_client());
  AsyncMutex waiter(client, key, options);
  std::optional<std::error_code> locked;
  waiter.async_lock([&](std::error_code error) { locked = error; });
  ASSERT_TRUE(runner.run_until([&] { return waiter_settled(GetParam(), key); })) << "the waiter never queued";
  const auto before = client.client().stats().round_trips;
  holder.unlock();
  ASSERT_TRUE(runner.run_until([&] { return locked.has_value(); }));
  EXPECT_FALSE(*locked) << locked->message();
  EXPECT_EQ(client.client().stats().round_trips, before) << "the granted waiter made a round trip before it held the lock";
  EXPECT_EQ(raw({"GET", key}).str, waiter.value());
  std::optional<std::error_code> released;
  waiter.async_unlock([&](std::error_code error) { released = error; });
  ASSERT_TRUE(runner.run_until([&] { return released.has_value(); }));
  EXPECT_TRUE(raw({"GET", key}).is_nil());
}

INSTANTIATE_TEST_SUITE_P(
    Strategies, Grant,
    ::testing::Values(GrantVariant{"TokenNotify", token_options()}, GrantVariant{"TokenFair", token_options(), true},
                      GrantVariant{"LegacyHardened", hardened_options()},
                      GrantVariant{"LegacyHardenedSeconds", hardened_options(LegacyFormat::epoch_seconds)},
                      GrantVariant{"LegacyHardenedUuid", hardened_options(LegacyFormat::uuid_ms)}),
    [](const auto& param_info) { return param_info.param.name; });

// Java services running jedis-lock read a lock granted to a hardened waiter as an ordinary held
// lock: the faithful preset (jedis-lock 1.0's exact commands) finds it held and leaves it alone.
TEST(GrantToLegacy, AJavaProtocolPeerSeesAHeldStamp) {
  for (const LegacyFormat format : {LegacyFormat::epoch_ms, LegacyFormat::epoch_seconds, LegacyFormat::uuid_ms}) {
    SCOPED_TRACE(to_string(format));
    const std::string key = unique_key();
    const MutexOptions options = waiter_options(GrantVariant{"legacy", hardened_options(format)});
    HolderAndWaiter pair(key, options);
    ASSERT_TRUE(pair.held);
    Mutex& waiter = pair.waiter;
    ASSERT_TRUE(eventually([&] { return first_waiter_starves(GrantVariant{"legacy", options}, key); }));
    ASSERT_TRUE(pair.hand_over());
    const std::string granted = raw({"GET", key}).str;
    EXPECT_EQ(granted, waiter.value());
    const auto stamp = parse_legacy_value(granted, format);
    ASSERT_TRUE(stamp) << granted << " is not a " << to_string(format) << " stamp";
    EXPECT_FALSE(is_expired(*stamp, server_ms()));
    MutexOptions java = faithful_options(format);
    Client java_client = test_client();
    Mutex peer(java_client, key, java);
    EXPECT_FALSE(peer.try_lock()) << "a jedis-lock peer took a lock granted to a waiter";
    EXPECT_EQ(raw({"GET", key}).str, granted) << "the jedis-lock peer changed the granted stamp";
    waiter.unlock();
  }
}

// A fence drawn by a grant is written in whole digits however large (Lua would write 1e14 and
// more in exponent form), so the waiter reads it and holds with it.
TEST(GrantFence, ALargeFenceDrawnByAGrantReachesTheWaiter) {
  const std::string key = unique_key();
  MutexOptions options = waiter_options(GrantVariant{"token", token_options()});
  options.token.fencing = true;
  raw({"SET", detail::fence_counter(key), "123456789012345"});
  HolderAndWaiter pair(key, options);
  ASSERT_TRUE(pair.held);
  ASSERT_TRUE(eventually([&] { return first_waiter_starves(GrantVariant{"token", options}, key); }));
  ASSERT_TRUE(pair.hand_over());
  EXPECT_EQ(pair.waiter.fence(), std::optional<std::uint64_t>(123456789012347ULL));
  pair.waiter.unlock();
}

// A queued hardened waiter that takes over an expired stamp (its holder died; the key outlives the
// stamp by the safety grace) leaves the queue as it does: a release would otherwise grant the
// lock to its stale entry.
TEST(GrantToLegacy, AWaiterThatTakesOverAnExpiredStampLeavesTheQueue) {
  const std::string key = unique_key();
  const MutexOptions options = waiter_options(GrantVariant{"legacy", hardened_options()});
  // A hardened holder that died: its stamp ends in 300 ms, its key lives a minute.
  raw({"SET", key, format_legacy_value(LegacyFormat::epoch_ms, server_ms() + 300), "PX", "60000"});
  Client waiter_client = listening_client();
  Mutex waiter(waiter_client, key, options);
  ASSERT_TRUE(waiter.try_lock_for(seconds(30)));
  EXPECT_EQ(raw({"GET", key}).str, waiter.value());
  EXPECT_EQ(raw({"LLEN", detail::waiter_queue(key)}).integer, 0) << "the waiter stayed queued after its takeover";
  EXPECT_EQ(raw({"HLEN", detail::waiter_times(key)}).integer, 0);
  waiter.unlock();
}

// A blocking waiter reads its Client's subscription itself while it waits (so the message that
// grants it the lock wakes the thread that returns from lock(); release_notifier.hpp). The Client's
// other waiters must still hear theirs: from that reader while it reads, and from the notifier's
// thread once it has left. Each waiter retries only every minute (settling_waiter): a message
// nobody read would leave it asleep past the bound. Either lock is released first: the waiter
// that went to sleep first is the reader (or, if the other overtook it, the cases swap).
// Two locks held by one Client of their own.
struct TwoHeld {
  explicit TwoHeld(const MutexOptions& options) : first(client, first_key, options), second(client, second_key, options) {}
  bool held() { return first.try_lock() && second.try_lock(); }

  const std::string first_key = unique_key();
  const std::string second_key = unique_key();
  Client client = test_client();
  Mutex first;
  Mutex second;
};

TEST(GrantToAClientsWaiters, EachOfTwoBlockingWaitersOfOneClientHearsItsGrant) {
  const GrantVariant variant{"TokenNotify", token_options()};
  const MutexOptions options = settling_waiter(variant);
  for (const bool reader_first : {true, false}) {
    SCOPED_TRACE(reader_first ? "the first sleeper's lock is released first" : "the other's lock is released first");
    TwoHeld holders(options);
    ASSERT_TRUE(holders.held());
    Client waiter_client = listening_client();
    Mutex first_waiter(waiter_client, holders.first_key, options);
    Mutex second_waiter(waiter_client, holders.second_key, options);
    auto first = std::async(std::launch::async, [&] { first_waiter.lock(); });
    ASSERT_TRUE(eventually([&] { return waiter_settled(variant, holders.first_key); })) << "the first never queued";
    auto second = std::async(std::launch::async, [&] { second_waiter.lock(); });
    ASSERT_TRUE(eventually([&] { return waiter_settled(variant, holders.second_key); })) << "the second never queued";
    if (reader_first) {
      EXPECT_TRUE(hand_over(holders.first, first)) << "the first waiter did not hear its grant";
      EXPECT_TRUE(hand_over(holders.second, second)) << "the second waiter did not hear its grant";
    } else {
      EXPECT_TRUE(hand_over(holders.second, second)) << "the second waiter did not hear its grant";
      EXPECT_TRUE(hand_over(holders.first, first)) << "the first waiter did not hear its grant";
    }
    EXPECT_TRUE(first_waiter.owns_lock());
    EXPECT_TRUE(second_waiter.owns_lock());
  }
}

// The same with an event-driven waiter beside the blocking one on one Client: the async waiter
// never reads the subscription itself, so after the blocking reader has left, the notifier's
// thread must read again for it.
TEST(GrantToAClientsWaiters, AnAsyncWaiterBesideABlockingOneHearsItsGrant) {
  const GrantVariant variant{"TokenNotify", token_options()};
  const MutexOptions options = settling_waiter(variant);
  for (const bool blocking_first : {true, false}) {
    SCOPED_TRACE(blocking_first ? "the blocking waiter's lock is released first" : "the async waiter's lock first");
    TwoHeld holders(options);  // first: the blocking waiter's lock, second: the async waiter's
    ASSERT_TRUE(holders.held());
    const std::string& blocking_key = holders.first_key;
    const std::string& async_key = holders.second_key;
    LoopRunner runner;
    AsyncClient client(runner.io().get_executor(), listening_client());
    AsyncMutex async_waiter(client, async_key, options);
    std::optional<std::error_code> locked;
    async_waiter.async_lock([&](std::error_code error) { locked = error; });
    ASSERT_TRUE(runner.run_until([&] { return waiter_settled(variant, async_key); })) << "the async waiter never queued";
    Mutex blocking_waiter(client.client(), blocking_key, options);
    auto blocked = std::async(std::launch::async, [&] { blocking_waiter.lock(); });
    ASSERT_TRUE(runner.run_until([&] { return waiter_settled(variant, blocking_key); }))
        << "the blocking waiter never queued";
    const auto blocking_hand_over = [&] { return hand_over(holders.first, blocked); };
    const auto async_hand_over = [&] {
      holders.second.unlock();
      return runner.run_until([&] { return locked.has_value(); });
    };
    if (blocking_first) {
      EXPECT_TRUE(blocking_hand_over()) << "the blocking waiter did not hear its grant";
      EXPECT_TRUE(async_hand_over()) << "the async waiter did not hear its grant";
    } else {
      EXPECT_TRUE(async_hand_over()) << "the async waiter did not hear its grant";
      EXPECT_TRUE(blocking_hand_over()) << "the blocking waiter did not hear its grant";
    }
    ASSERT_TRUE(locked.has_value());
    EXPECT_FALSE(*locked) << locked->message();
    EXPECT_TRUE(blocking_waiter.owns_lock());
    std::optional<std::error_code> released;
    async_waiter.async_unlock([&](std::error_code error) { released = error; });
    EXPECT_TRUE(runner.run_until([&] { return released.has_value(); }));
  }
}

}  // namespace
}  // namespace lockbridge::testing
