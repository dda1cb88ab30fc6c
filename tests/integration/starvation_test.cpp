// The starvation rule of notify mode (MutexOptions::starvation_after, docs/design.md §10.5)
// against the fixture's redis-server, for both fronts of the one waiting loop (a Mutex on a key,
// and a MultiMutex on a set of keys whose first is that key) and for the hardened legacy preset
// in its three formats. Clients stand for processes
// (local_queue off) unless a test is about the local line. Every assertion is about who gets the
// lock and what Redis holds, never about how long anything took.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "lockbridge/legacy_value.hpp"
#include "lockbridge/multi_mutex.hpp"
#include "lockbridge/observer.hpp"
#include "redis_test_support.hpp"
#include "redisson_peer.hpp"
#include "strategies/companion_keys.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::seconds;

enum class Front { mutex, multi_mutex };

// A lock of either front, behind the calls these tests make.
class AnyLock {
 public:
  AnyLock(Front front, Client& client, const std::string& key, const MutexOptions& options) {
    if (front == Front::mutex) {
      lock_ = std::make_unique<Mutex>(client, key, options);
    } else {
      lock_ = std::make_unique<MultiMutex>(client, std::vector<std::string>{key, second_key(key)}, options);
    }
  }
  // The other key of the MultiMutex front (sorted after `key`, so `key` stays its first).
  static std::string second_key(const std::string& key) { return key + "~b"; }

  void lock() {
    std::visit([](auto& lock) { lock->lock(); }, lock_);
  }
  bool try_lock() {
    return std::visit([](auto& lock) { return lock->try_lock(); }, lock_);
  }
  bool try_lock_for(milliseconds wait) {
    return std::visit([wait](auto& lock) { return lock->try_lock_for(wait); }, lock_);
  }
  void unlock() {
    std::visit([](auto& lock) { lock->unlock(); }, lock_);
  }
  bool owns_lock() const {
    return std::visit([](const auto& lock) { return lock->owns_lock(); }, lock_);
  }

 private:
  std::variant<std::unique_ptr<Mutex>, std::unique_ptr<MultiMutex>> lock_;
};

// A front and the options of its strategy.
struct Variant {
  std::string name;
  Front front;
  MutexOptions base;
};

MutexOptions notify_options(milliseconds starvation_after, MutexOptions options = token_options()) {
  options.wait_mode = WaitMode::notify;
  options.starvation_after = starvation_after;
  options.local_queue = false;  // these waiters stand for other processes
  options.acquire_timeout = seconds(30);
  // Short sleeps: a waiter without the rule retries often, as a barging peer does.
  options.retry = RetryPolicy::backoff_with_jitter(milliseconds(1), milliseconds(5));
  return options;
}

long long queued(const std::string& key) { return raw({"LLEN", detail::waiter_queue(key)}).integer; }

// Whether the first waiter queued on `key` starves by the server's clock: its "<deadline ms>
// <starving at ms>" entry says so. False while nobody is queued.
bool first_waiter_starves(const std::string& key) {
  const Reply first = raw({"LINDEX", detail::waiter_queue(key), "0"});
  if (first.is_nil()) return false;
  const Reply times = raw({"HGET", detail::waiter_times(key), first.str});
  if (times.is_nil()) return false;
  const std::int64_t starving_at = std::stoll(times.str.substr(times.str.find(' ') + 1));
  return server_ms() >= starving_at;
}

// A queued waiter that starves and is still alive (its deadline a minute ahead by the server's
// clock), or one that died (its deadline `ms` ahead, never refreshed); with `starving` false, one
// that will not starve for an hour.
void queue_waiter(const std::string& key, const std::string& waiter, std::int64_t ms, bool starving = true) {
  const std::int64_t now = server_ms();
  raw({"RPUSH", detail::waiter_queue(key), waiter});
  raw({"HSET", detail::waiter_times(key), waiter,
       std::to_string(now + ms) + " " + std::to_string(starving ? now : now + 3600000)});
}

class Starvation : public ::testing::TestWithParam<Variant> {
 protected:
  // A lock of the variant under test, waiting in notify mode with this starvation bound.
  std::unique_ptr<AnyLock> make(Client& client, const std::string& key, milliseconds starvation_after) const {
    return std::make_unique<AnyLock>(GetParam().front, client, key, notify_options(starvation_after, GetParam().base));
  }
  // The keys the front under test writes for `key`.
  std::vector<std::string> keys_of(const std::string& key) const {
    if (GetParam().front == Front::mutex) return {key};
    return {key, AnyLock::second_key(key)};
  }
  // A holder of the variant takes the lock and releases it again, as any process would.
  void take_and_release(const std::string& key) const {
    Client client = test_client();
    auto holder = make(client, key, hours(1));
    ASSERT_TRUE(holder->try_lock());
    holder->unlock();
  }
  // Whether `key` is held for `waiter`, handed to a waiter that gave no grant spec (these
  // tests' hand-made waiters): the waiter's id as the value (token), or a stamp Java peers read as
  // a live lock, recorded for the waiter in the grant record (legacy).
  bool handed_to(const std::string& key, const std::string& waiter) const {
    const Reply value = raw({"GET", key});
    if (value.is_nil()) return false;
    if (GetParam().base.strategy == StrategyKind::token) return value.str == waiter;
    const auto stamp = parse_legacy_value(value.str, GetParam().base.legacy.format);
    return stamp && !is_expired(*stamp, server_ms()) &&
           raw({"GET", detail::grant_record(key)}).str == waiter + " 0 " + value.str;
  }
};

TEST_P(Starvation, AWaiterPastTheBoundGetsTheLockBeforeOneThatCameLater) {
  const std::string key = unique_key();
  Client holder_client = test_client();
  auto holder = make(holder_client, key, hours(1));
  ASSERT_TRUE(holder->try_lock());

  std::mutex order_mutex;
  std::vector<std::string> order;
  const auto record = [&](const std::string& who) {
    std::lock_guard lock(order_mutex);
    order.push_back(who);
  };
  // The early waiter queues in Redis and starves at once (a bound of 1 ms).
  Client early_client = test_client();
  auto early = make(early_client, key, milliseconds(1));
  auto early_done = std::async(std::launch::async, [&] {
    early->lock();
    record("early");
    early->unlock();
  });
  ASSERT_TRUE(eventually([&] { return queued(key) == 1; })) << "the early waiter never queued";
  // The late one never starves (the rule is off for its waits) and retries every few ms: it
  // would barge in at the release if the release freed the lock.
  Client late_client = test_client();
  auto late = make(late_client, key, hours(1));
  const auto late_before = late_client.stats().round_trips;
  auto late_done = std::async(std::launch::async, [&] {
    late->lock();
    record("late");
    late->unlock();
  });
  ASSERT_TRUE(eventually([&] { return late_client.stats().round_trips - late_before >= 3; }));
  // Starving by the server's clock, which alone decides: a release before that frees the key, and
  // the late one may win the race for it (its three attempts can take less than the bound).
  ASSERT_TRUE(eventually([&] { return first_waiter_starves(key); })) << "the early waiter never starved";
  holder->unlock();
  ASSERT_EQ(early_done.wait_for(seconds(30)), std::future_status::ready);
  ASSERT_EQ(late_done.wait_for(seconds(30)), std::future_status::ready);
  early_done.get();
  late_done.get();
  EXPECT_EQ(order, (std::vector<std::string>{"early", "late"}));
  EXPECT_EQ(queued(key), 0) << "the served waiter leaves the queue";
}

TEST_P(Starvation, AReleaseHandsTheLockToTheStarvingWaiterAndNoNewcomerTakesIt) {
  const std::string key = unique_key();
  queue_waiter(key, "starving-waiter", 60000);
  take_and_release(key);
  for (const std::string& each : keys_of(key)) {
    EXPECT_TRUE(handed_to(each, "starving-waiter")) << each << " was not handed to the starving waiter";
    EXPECT_GT(raw({"PTTL", each}).integer, 0) << "a handed key lives only until the waiter's deadline";
  }
  Client newcomer_client = test_client();
  auto newcomer = make(newcomer_client, key, hours(1));
  EXPECT_FALSE(newcomer->try_lock()) << "a newcomer must not take a lock handed to a starving waiter";
  EXPECT_TRUE(handed_to(key, "starving-waiter"));
}

TEST_P(Starvation, AStarvingWaiterThatDiedBlocksTheLockNoLongerThanItsDeadline) {
  const std::string key = unique_key();
  // It queued and died: nothing refreshes its deadline, 3 s ahead (time for the release below to
  // find it still starving, however slow the run).
  queue_waiter(key, "dead-waiter", 3000);
  take_and_release(key);
  ASSERT_TRUE(handed_to(key, "dead-waiter")) << "the release hands the lock to the (not yet known dead) waiter";
  // What it was handed runs out with the dead waiter's deadline, and a live waiter gets the lock.
  Client waiter_client = test_client();
  auto waiter = make(waiter_client, key, milliseconds(1));
  ASSERT_TRUE(waiter->try_lock_for(seconds(30))) << "a dead starving waiter must not block the lock";
  EXPECT_EQ(raw({"HEXISTS", detail::waiter_times(key), "dead-waiter"}).integer, 0);
  EXPECT_EQ(queued(key), 0);
  waiter->unlock();
}

TEST_P(Starvation, AWaiterQueuesAfterItsFirstAttemptAndLeavesTheQueueWithTheLock) {
  const std::string key = unique_key();
  Client holder_client = test_client();
  auto holder = make(holder_client, key, hours(1));
  Client waiter_client = test_client();
  auto waiter = make(waiter_client, key, hours(1));
  ASSERT_TRUE(holder->try_lock());
  auto waited = std::async(std::launch::async, [&] { waiter->lock(); });
  ASSERT_TRUE(eventually([&] { return queued(key) == 1; })) << "a waiter that must wait queues in Redis";
  holder->unlock();
  ASSERT_EQ(waited.wait_for(seconds(30)), std::future_status::ready);
  waited.get();
  EXPECT_TRUE(waiter->owns_lock());
  waiter->unlock();
  EXPECT_EQ(raw({"EXISTS", detail::waiter_queue(key), detail::waiter_times(key), detail::grant_record(key)}).integer,
            0)
      << "the waiter that got the lock leaves no trace in Redis";
  for (const std::string& each : keys_of(key)) EXPECT_TRUE(raw({"GET", each}).is_nil());
}

// After its release handed the lock to a starving waiter, a lock knows others are queued: its next
// wait joins the queue with its first attempt instead of trying the fast path first (a round trip
// less per acquisition while waiters starve). After a release that freed the lock, the first
// attempt of a wait is the fast path, which does not queue.
TEST_P(Starvation, AfterAReleaseHandsTheKeyOverTheNextWaitJoinsTheQueueWithItsFirstAttempt) {
  const std::string key = unique_key();
  Client holder_client = test_client();
  auto holder = make(holder_client, key, hours(1));
  Client other_client = test_client();
  auto other = make(other_client, key, hours(1));
  // Whether the first attempt of a wait of 20 ms, while someone else holds the key, queued: it
  // names the waiter that the wait's end takes out of the queue (LREM).
  const auto first_attempt_queues = [&] {
    CommandRecorder recorder(key, /*containing=*/true);
    recorder.start();
    EXPECT_FALSE(holder->try_lock_for(milliseconds(20)));
    const auto sent = recorder.stop();
    const auto leave = std::find_if(sent.begin(), sent.end(), [](const auto& c) { return c.front() == "LREM"; });
    const auto first = std::find_if(sent.begin(), sent.end(), [&](const auto& c) {
      return (c.front() == "SET" || c.front() == "EVALSHA" || c.front() == "EVAL") &&
             std::find(c.begin(), c.end(), key) != c.end();
    });
    EXPECT_NE(leave, sent.end()) << "the wait never queued";
    EXPECT_NE(first, sent.end()) << "no attempt";
    if (leave == sent.end() || first == sent.end() || leave->size() < 4) return false;
    return std::find(first->begin(), first->end(), (*leave)[3]) != first->end();
  };
  ASSERT_TRUE(other->try_lock());
  EXPECT_FALSE(first_attempt_queues()) << "after no release of its own, a wait starts with the fast path";
  other->unlock();
  // A release that handed the lock on (to a waiter that starves and never claims it).
  ASSERT_TRUE(holder->try_lock());
  queue_waiter(key, "starving-waiter", 60000);
  holder->unlock();
  ASSERT_TRUE(handed_to(key, "starving-waiter"));
  EXPECT_TRUE(first_attempt_queues()) << "after a release that handed the key over, the first attempt joins the queue";
}

TEST_P(Starvation, AReleaseBeforeTheBoundFreesTheLockAndWakesOnlyTheFirstWaiter) {
  const std::string key = unique_key();
  // Two live waiters, neither starving yet.
  queue_waiter(key, "first-waiter", 60000, /*starving=*/false);
  queue_waiter(key, "second-waiter", 60000, /*starving=*/false);
  PeerSubscriber ears(test_dir() + "/redis.sock", "SSUBSCRIBE", detail::release_channel(key));
  ASSERT_TRUE(ears.subscribed());
  take_and_release(key);
  for (const std::string& each : keys_of(key)) EXPECT_TRUE(raw({"GET", each}).is_nil()) << each << " must be free";
  EXPECT_EQ(ears.next_message(), "first-waiter") << "the announcement wakes the first waiter alone";
  EXPECT_EQ(queued(key), 2) << "nobody was served: both still wait";
}

TEST_P(Starvation, AFirstWaiterThatNeverComesBackDoesNotKeepTheOthersWaiting) {
  const std::string key = unique_key();
  Client holder_client = test_client();
  auto holder = make(holder_client, key, hours(1));
  ASSERT_TRUE(holder->try_lock());
  // A first waiter that is alive by its deadline but does not answer its wake-up (it hangs).
  queue_waiter(key, "silent-waiter", 60000, /*starving=*/false);
  MutexOptions options = notify_options(hours(1), GetParam().base);
  options.fair_waiter_timeout = milliseconds(600);  // a queued waiter asks again every 200 ms
  Client waiter_client = test_client();
  AnyLock waiter(GetParam().front, waiter_client, key, options);
  auto waited = std::async(std::launch::async, [&] { return waiter.try_lock_for(seconds(30)); });
  ASSERT_TRUE(eventually([&] { return queued(key) == 2; }));
  holder->unlock();  // wakes the silent waiter only
  ASSERT_TRUE(waited.get()) << "the free lock must not wait for a first waiter that does not starve";
  waiter.unlock();
}

TEST_P(Starvation, AStarvingWaiterThatGivesUpLeavesTheQueue) {
  const std::string key = unique_key();
  Client holder_client = test_client();
  auto holder = make(holder_client, key, hours(1));
  ASSERT_TRUE(holder->try_lock());
  Client waiter_client = test_client();
  auto waiter = make(waiter_client, key, milliseconds(1));
  EXPECT_FALSE(waiter->try_lock_for(milliseconds(300)));
  EXPECT_EQ(queued(key), 0) << "a waiter that gave up must not be handed the lock later";
  EXPECT_EQ(raw({"HLEN", detail::waiter_times(key)}).integer, 0);
  holder->unlock();
  for (const std::string& each : keys_of(key)) EXPECT_TRUE(raw({"GET", each}).is_nil()) << each;
}

TEST_P(Starvation, ALockHandedToAWaiterThatGaveUpIsPassedOn) {
  const std::string key = unique_key();
  Client holder_client = test_client();
  auto holder = make(holder_client, key, hours(1));
  ASSERT_TRUE(holder->try_lock());
  // A starving waiter whose wait ends without the lock; the release in between hands it the lock.
  Client waiter_client = test_client();
  auto waiter = make(waiter_client, key, milliseconds(1));
  auto gave_up = std::async(std::launch::async, [&] { return waiter->try_lock_for(milliseconds(400)); });
  ASSERT_TRUE(eventually([&] { return queued(key) == 1; }));
  // A second starving waiter, alive, behind it.
  queue_waiter(key, "next-waiter", 60000);
  // The release hands the lock to the first; if it claims it in time, it unlocks and the lock goes
  // on to the next one too. Either way the lock ends up with the next waiter, never stuck.
  holder->unlock();
  if (gave_up.get()) waiter->unlock();
  EXPECT_TRUE(eventually([&] { return handed_to(key, "next-waiter"); }))
      << "the lock must go on to the next starving waiter, got '" << raw({"GET", key}).str << "'";
}

TEST_P(Starvation, AQueueKeyOfAnotherTypeDoesNotStopARelease) {
  const std::string key = unique_key();
  raw({"SET", detail::waiter_queue(key), "not a list"});
  take_and_release(key);
  for (const std::string& each : keys_of(key)) EXPECT_TRUE(raw({"GET", each}).is_nil()) << each;
  EXPECT_EQ(raw({"GET", detail::waiter_queue(key)}).str, "not a list") << "a foreign key is left alone";
}

TEST_P(Starvation, ABusyProcessPassesTheLockToAStarvingWaiterElsewhere) {
  const std::string key = unique_key();
  // One process: two threads take turns on the lock through the local line, as fast as they can.
  MutexOptions busy = notify_options(hours(1), GetParam().base);
  busy.local_queue = true;
  Client busy_client = test_client();
  std::atomic<bool> stop{false};
  std::atomic<long> busy_acquisitions{0};
  std::vector<std::future<void>> threads;
  for (int i = 0; i < 2; ++i) {
    threads.push_back(std::async(std::launch::async, [&] {
      AnyLock mine(GetParam().front, busy_client, key, busy);
      for (int n = 0; n < 200000 && !stop; ++n) {
        mine.lock();
        ++busy_acquisitions;
        mine.unlock();
      }
    }));
  }
  ASSERT_TRUE(eventually([&] { return busy_acquisitions > 10; }));
  // Another process's waiter: once it starves, the busy process's next release is its turn.
  Client other_client = test_client();
  auto other = make(other_client, key, milliseconds(1));
  auto waited = std::async(std::launch::async, [&] { return other->try_lock_for(seconds(30)); });
  // Counted from when Redis holds the waiter starving (it queued and its bound passed by the
  // server's clock), not from when it queued: between the two the busy line may win any number of
  // races for the free key, as the rule allows (under load up to 4 were counted there, and the
  // test failed once in CI; from the starving point on, never more than 1 in 1,000 runs).
  ASSERT_TRUE(eventually(
      [&] { return first_waiter_starves(key) || waited.wait_for(milliseconds(0)) == std::future_status::ready; }));
  const long busy_at_starving = busy_acquisitions;
  const bool got = waited.get();
  const long busy_meanwhile = busy_acquisitions - busy_at_starving;
  if (got) other->unlock();
  stop = true;
  for (auto& thread : threads) thread.get();
  ASSERT_TRUE(got) << "the busy process starved the other waiter";
  // Every release Redis runs after that hands the lock to the waiter. At most two acquisitions are
  // counted after it: one Redis granted before but counted after, and one by a busy thread queued
  // in Redis ahead of the waiter (the first live waiter is served; it does not starve, so the key
  // is freed for it). The local line lets only one busy thread contend, or queue, at a time.
  EXPECT_LE(busy_meanwhile, 2) << "the local line went on passing the lock while a waiter elsewhere starved";
}

// What an observer is told of the rule (lockbridge/observer.hpp): counts of each kind of event.
class StarvationEars : public Observer {
 public:
  void starving(const StarvingEvent& event) override {
    // Counted last: a test that has seen starving_waits change reads the rest of the event.
    if (event.wait >= milliseconds(1)) ++starving_past_the_bound;
    ++starving_waits;
  }
  void acquired(const AcquiredEvent& event) override { ++(event.starved ? starved_acquisitions : acquisitions); }
  void released(const ReleasedEvent& event) override { ++(event.handed_over ? handoffs : releases); }

  std::atomic<int> starving_waits{0};
  std::atomic<int> starving_past_the_bound{0};
  std::atomic<int> starved_acquisitions{0};
  std::atomic<int> acquisitions{0};
  std::atomic<int> handoffs{0};
  std::atomic<int> releases{0};
};

TEST_P(Starvation, ObserversHearTheStarvingWaitAndTheReleaseHandedToIt) {
  const std::string key = unique_key();
  const auto holder_ears = std::make_shared<StarvationEars>();
  const auto waiter_ears = std::make_shared<StarvationEars>();
  MutexOptions holder_options = notify_options(hours(1), GetParam().base);
  holder_options.observer = holder_ears;
  MutexOptions waiter_options = notify_options(milliseconds(1), GetParam().base);
  waiter_options.observer = waiter_ears;
  Client holder_client = test_client();
  AnyLock holder(GetParam().front, holder_client, key, holder_options);
  ASSERT_TRUE(holder.try_lock());
  Client waiter_client = test_client();
  AnyLock waiter(GetParam().front, waiter_client, key, waiter_options);
  auto waited = std::async(std::launch::async, [&] { waiter.lock(); });
  ASSERT_TRUE(eventually([&] { return queued(key) == 1; })) << "the waiter never queued";
  ASSERT_TRUE(eventually([&] { return waiter_ears->starving_waits == 1; })) << "no StarvingEvent while it waits";
  EXPECT_EQ(waiter_ears->starving_past_the_bound, 1) << "a StarvingEvent's wait is at least the bound";
  holder.unlock();
  ASSERT_EQ(waited.wait_for(seconds(30)), std::future_status::ready);
  waited.get();
  waiter.unlock();
  EXPECT_TRUE(eventually([&] { return holder_ears->handoffs == 1 && waiter_ears->releases == 1; }));
  EXPECT_TRUE(eventually([&] { return waiter_ears->starved_acquisitions == 1; }));
  EXPECT_EQ(holder_ears->releases, 0) << "the holder's release handed the lock over";
  EXPECT_EQ(holder_ears->starving_waits, 0) << "the holder never waited";
  EXPECT_EQ(waiter_ears->handoffs, 0) << "nobody waited for the waiter's release";
  EXPECT_EQ(waiter_ears->starving_waits, 1) << "one StarvingEvent per wait";
}

INSTANTIATE_TEST_SUITE_P(
    FrontsAndStrategies, Starvation,
    ::testing::Values(Variant{"Mutex", Front::mutex, token_options()},
                      Variant{"MultiMutex", Front::multi_mutex, token_options()},
                      Variant{"LegacyHardened", Front::mutex, hardened_options()},
                      Variant{"LegacyHardenedSeconds", Front::mutex, hardened_options(LegacyFormat::epoch_seconds)},
                      Variant{"LegacyHardenedUuid", Front::mutex, hardened_options(LegacyFormat::uuid_ms)}),
    [](const auto& param_info) { return param_info.param.name; });

TEST(StarvationRule, TheFaithfulPresetKeepsJedisLocksRelease) {
  const std::string key = unique_key();
  // A starving lockbridge waiter is queued, but a faithful holder releases as jedis-lock does: a
  // plain DEL, no grant, no announcement.
  queue_waiter(key, "starving-waiter", 60000);
  Client client = test_client();
  Mutex holder(client, key, faithful_options());
  ASSERT_TRUE(holder.try_lock());
  holder.unlock();
  EXPECT_TRUE(raw({"GET", key}).is_nil());
  EXPECT_EQ(raw({"EXISTS", detail::grant_record(key)}).integer, 0);
}

TEST(StarvationRule, AHandedLockIsClaimedWithALargerFence) {
  const std::string key = unique_key();
  MutexOptions options = notify_options(milliseconds(1));
  options.token.fencing = true;
  Client holder_client = test_client();
  Mutex holder(holder_client, key, options);
  ASSERT_TRUE(holder.try_lock());
  Client waiter_client = test_client();
  Mutex waiter(waiter_client, key, options);
  auto waited = std::async(std::launch::async, [&] { waiter.lock(); });
  ASSERT_TRUE(eventually([&] { return queued(key) == 1; }));
  holder.unlock();
  ASSERT_EQ(waited.wait_for(seconds(30)), std::future_status::ready);
  waited.get();
  ASSERT_TRUE(holder.fence() && waiter.fence());
  EXPECT_GT(*waiter.fence(), *holder.fence());
  EXPECT_TRUE(is_token(raw({"GET", key}).str)) << "the claim writes the waiter's own token";
}

TEST(StarvationRule, PollModeWaitersNeverQueueAsStarving) {
  const std::string key = unique_key();
  Client holder_client = test_client();
  Mutex holder(holder_client, key, notify_options(hours(1)));
  ASSERT_TRUE(holder.try_lock());
  MutexOptions poll = notify_options(milliseconds(1));
  poll.wait_mode = WaitMode::poll;
  Client waiter_client = test_client();
  Mutex waiter(waiter_client, key, poll);
  EXPECT_FALSE(waiter.try_lock_for(milliseconds(200)));
  EXPECT_EQ(raw({"EXISTS", detail::waiter_queue(key)}).integer, 0);
}

TEST(StarvationRule, ANegativeBoundIsRefused) {
  MutexOptions options = token_options();
  options.starvation_after = milliseconds(-1);
  const Error error = expect_error([&] { options.validate(); });
  EXPECT_EQ(error.errc(), Errc::bad_option);
  EXPECT_NE(std::string(error.what()).find("starvation_after"), std::string::npos) << error.what();
}

}  // namespace
}  // namespace lockbridge::testing
