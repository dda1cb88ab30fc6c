// Observers (lockbridge/observer.hpp): every event with what it says (key, strategy, attempts,
// reason), the lease lost by deletion, takeover and its end, the watchdog's renewals, a lock's own
// observer in place of the Client's, and an observer that throws or blocks breaking no lock.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "lockbridge/latch.hpp"
#include "lockbridge/leased_semaphore.hpp"
#include "lockbridge/multi_mutex.hpp"
#include "lockbridge/observer.hpp"
#include "lockbridge/semaphore.hpp"
#include "redis_test_support.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Every event as one line ("acquired <key> token attempts=1"), in delivery order.
class Recorder : public Observer {
 public:
  void acquired(const AcquiredEvent& e) override {
    add("acquired " + e.key + " " + std::string(e.strategy) + " attempts=" + std::to_string(e.attempts) +
        (e.fence ? " fence" : "") + (e.wait.count() >= 0 ? "" : " negative-wait"));
  }
  void not_acquired(const NotAcquiredEvent& e) override {
    add("not_acquired " + e.key + " attempts=" + std::to_string(e.attempts) +
        " error=" + (e.error ? std::string(e.error.message()) : "none"));
  }
  void released(const ReleasedEvent& e) override {
    add("released " + e.key + " error=" + (e.error ? std::string(e.error.message()) : "none"));
  }
  void lease_lost(const LeaseLostEvent& e) override {
    add("lease_lost " + e.key + " " + std::string(to_string(e.reason)));
  }
  void renewed(const RenewedEvent& e) override { add("renewed " + std::to_string(e.leases)); }
  void counter_waited(const CounterWaitEvent& e) override {
    add("counter_waited " + e.key + " " + std::string(e.object) + " permits=" + std::to_string(e.permits) +
        " attempts=" + std::to_string(e.attempts) + (e.done ? " done" : " not-done") +
        " error=" + (e.error ? std::string(e.error.message()) : "none"));
  }
  void permits_released(const PermitsReleasedEvent& e) override {
    add("permits_released " + e.key + " " + std::string(e.object) + " permits=" + std::to_string(e.permits) +
        " error=" + (e.error ? std::string(e.error.message()) : "none"));
  }

  std::vector<std::string> lines() const {
    std::lock_guard lock(mutex_);
    return lines_;
  }
  // Whether a line equal to `line` arrives (bounded by eventually()).
  bool heard(const std::string& line) const {
    return eventually([&] {
      const auto seen = lines();
      return std::find(seen.begin(), seen.end(), line) != seen.end();
    });
  }
  bool heard_prefix(const std::string& prefix, const std::string& suffix = "") const {
    return eventually([&] {
      for (const std::string& line : lines()) {
        if (line.starts_with(prefix) && line.ends_with(suffix)) return true;
      }
      return false;
    });
  }

 private:
  void add(std::string line) {
    std::lock_guard lock(mutex_);
    lines_.push_back(std::move(line));
  }
  mutable std::mutex mutex_;
  std::vector<std::string> lines_;
};

Client observed_client(const std::shared_ptr<Observer>& observer) {
  ClientOptions options;
  options.observer = observer;
  return test_client(options);
}

MutexOptions watched(milliseconds lease) {
  MutexOptions options = one_attempt_options();
  options.lease = lease;
  options.watchdog.enabled = true;
  return options;
}

TEST(Observer, HearsAnAcquisitionAndItsRelease) {
  const auto recorder = std::make_shared<Recorder>();
  const std::string key = unique_key();
  MutexOptions fenced = one_attempt_options();
  fenced.token.fencing = true;
  Mutex mutex(observed_client(recorder), key, fenced);
  ASSERT_TRUE(mutex.try_lock());
  mutex.unlock();
  ASSERT_TRUE(recorder->heard("released " + key + " error=none"));
  EXPECT_THAT(recorder->lines(),
              ::testing::ElementsAre("acquired " + key + " token attempts=1 fence", "released " + key + " error=none"));
}

TEST(Observer, HearsACallThatGaveUpAndOneThatFailed) {
  const auto recorder = std::make_shared<Recorder>();
  const Client client = observed_client(recorder);
  const std::string key = unique_key();
  Mutex holder(test_client(), key, one_attempt_options());
  ASSERT_TRUE(holder.try_lock());
  Mutex waiter(client, key, one_attempt_options());
  EXPECT_FALSE(waiter.try_lock());
  EXPECT_TRUE(recorder->heard("not_acquired " + key + " attempts=1 error=none"));

  const std::string list_key = unique_key("list");
  raw({"RPUSH", list_key, "x"});
  Mutex wrong(client, list_key, one_attempt_options());
  const Error error = expect_error([&] { (void)wrong.try_lock(); });
  EXPECT_TRUE(recorder->heard("not_acquired " + list_key + " attempts=1 error=" + error.code().message()));
  holder.unlock();
  raw({"DEL", list_key});
}

TEST(Observer, HearsTheLeaseLostWhenTheKeyIsDeleted) {
  const auto recorder = std::make_shared<Recorder>();
  const std::string key = unique_key();
  Mutex mutex(observed_client(recorder), key, watched(seconds(3)));
  ASSERT_TRUE(mutex.try_lock());
  raw({"DEL", key});
  EXPECT_TRUE(recorder->heard("lease_lost " + key + " deleted"));
  mutex.unlock();
  EXPECT_TRUE(recorder->heard("released " + key + " error=" + make_error_code(Errc::lease_lost).message()));
}

TEST(Observer, HearsTheLeaseLostWhenAnotherOwnerTakesTheKey) {
  const auto recorder = std::make_shared<Recorder>();
  const std::string key = unique_key();
  Mutex mutex(observed_client(recorder), key, watched(seconds(3)));
  ASSERT_TRUE(mutex.try_lock());
  raw({"SET", key, "someone-else", "PX", "60000"});
  EXPECT_TRUE(recorder->heard("lease_lost " + key + " taken"));
  EXPECT_EQ(raw({"GET", key}).str, "someone-else");
  raw({"DEL", key});
}

TEST(Observer, HearsTheLeaseLostWhenItRunsOutAndExtendFindingItGone) {
  const auto recorder = std::make_shared<Recorder>();
  const Client client = observed_client(recorder);
  const std::string key = unique_key();
  MutexOptions short_lease = one_attempt_options();
  short_lease.lease = milliseconds(100);
  Mutex mutex(client, key, short_lease);
  ASSERT_TRUE(mutex.try_lock());
  EXPECT_TRUE(recorder->heard("lease_lost " + key + " expired"));

  const std::string other = unique_key("extend");
  Mutex extended(client, other, one_attempt_options());
  ASSERT_TRUE(extended.try_lock());
  raw({"DEL", other});
  EXPECT_FALSE(extended.extend(milliseconds(1000)));
  EXPECT_TRUE(recorder->heard("lease_lost " + other + " deleted"));
}

TEST(Observer, HearsTheWatchdogsRenewals) {
  const auto recorder = std::make_shared<Recorder>();
  const std::string key = unique_key();
  Mutex mutex(observed_client(recorder), key, watched(seconds(3)));
  ASSERT_TRUE(mutex.try_lock());
  EXPECT_TRUE(recorder->heard("renewed 1"));
  mutex.unlock();
}

TEST(Observer, ALocksOwnObserverReplacesTheClients) {
  const auto clients = std::make_shared<Recorder>();
  const auto its_own = std::make_shared<Recorder>();
  const std::string key = unique_key();
  MutexOptions options = one_attempt_options();
  options.observer = its_own;
  Mutex mutex(observed_client(clients), key, options);
  ASSERT_TRUE(mutex.try_lock());
  mutex.unlock();
  EXPECT_TRUE(its_own->heard("released " + key + " error=none"));
  EXPECT_TRUE(clients->lines().empty());
}

TEST(Observer, AMultiMutexIsNamedByAllItsKeys) {
  const auto recorder = std::make_shared<Recorder>();
  const std::string first = unique_key("{tag}a");
  const std::string second = unique_key("{tag}b");
  MultiMutex both(observed_client(recorder), {first, second}, one_attempt_options());
  ASSERT_TRUE(both.try_lock());
  both.unlock();
  EXPECT_TRUE(recorder->heard_prefix("acquired " + first + " " + second + " token"));
}

// Throws from every callback: the locks work, and the events after a throw are still delivered.
class Thrower : public Recorder {
 public:
  void acquired(const AcquiredEvent& e) override {
    Recorder::acquired(e);
    throw std::runtime_error("observer bug");
  }
  void released(const ReleasedEvent& e) override {
    Recorder::released(e);
    throw 42;  // not even an exception type
  }
};

// The objects that are not locks report their waits (done, given up, stopped, failed) and the
// permits they give back, through the Client's observer.
TEST(Observer, HearsTheWaitsOfLatchesAndSemaphoresAndThePermitsTheyGiveBack) {
  auto recorder = std::make_shared<Recorder>();
  const Client client = observed_client(recorder);
  const std::string pool = unique_key("pool");
  Semaphore semaphore(client, pool);
  ASSERT_TRUE(semaphore.try_set_permits(2));
  ASSERT_TRUE(semaphore.try_acquire(2));
  EXPECT_TRUE(recorder->heard("counter_waited " + pool + " semaphore permits=2 attempts=1 done error=none"));
  EXPECT_FALSE(semaphore.try_acquire_for(milliseconds(1)));
  EXPECT_TRUE(
      recorder->heard_prefix("counter_waited " + pool + " semaphore permits=1 attempts=", " not-done error=none"))
      << "the wait that gave up";
  semaphore.release(2);
  EXPECT_TRUE(recorder->heard("permits_released " + pool + " semaphore permits=2 error=none"));
  std::stop_source stopped;
  stopped.request_stop();
  ASSERT_TRUE(semaphore.try_acquire(2));
  EXPECT_FALSE(semaphore.try_acquire_for(std::chrono::minutes(1), 1, stopped.get_token()));
  EXPECT_TRUE(recorder->heard_prefix("counter_waited " + pool + " semaphore permits=1 attempts=1 not-done error=" +
                                     std::make_error_code(std::errc::operation_canceled).message()));

  const std::string latch_key = unique_key("latch");
  Latch latch(client, latch_key);
  EXPECT_TRUE(latch.try_wait_for(milliseconds(0)));
  EXPECT_TRUE(recorder->heard("counter_waited " + latch_key + " latch permits=0 attempts=1 done error=none"));
  raw({"SET", latch_key, "not a count"});
  EXPECT_THROW((void)latch.try_wait_for(milliseconds(0)), Error);
  EXPECT_TRUE(recorder->heard_prefix("counter_waited " + latch_key + " latch permits=0 attempts=1 not-done error=" +
                                     make_error_code(Errc::bad_value).message()));

  const std::string leased_key = unique_key("leased");
  LeasedSemaphore leased(client, leased_key);
  ASSERT_TRUE(leased.try_set_permits(1));
  const std::optional<std::string> permit = leased.try_acquire(std::chrono::seconds(30));
  ASSERT_TRUE(permit);
  EXPECT_TRUE(
      recorder->heard("counter_waited " + leased_key + " leased_semaphore permits=1 attempts=1 done error=none"));
  EXPECT_TRUE(leased.release(*permit));
  EXPECT_FALSE(leased.release(*permit));
  EXPECT_TRUE(recorder->heard("permits_released " + leased_key + " leased_semaphore permits=1 error=none"));
  EXPECT_TRUE(recorder->heard("permits_released " + leased_key +
                              " leased_semaphore permits=1 error=" + make_error_code(Errc::lease_lost).message()));
}

TEST(Observer, OneThatThrowsBreaksNoLock) {
  const auto thrower = std::make_shared<Thrower>();
  const std::string key = unique_key();
  Mutex mutex(observed_client(thrower), key, one_attempt_options());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(mutex.try_lock());
    mutex.unlock();
    EXPECT_FALSE(mutex.last_error());
  }
  EXPECT_TRUE(eventually([&] { return thrower->lines().size() == 6U; }));
}

// Blocks in its first callback until let go.
class Blocker : public Recorder {
 public:
  void acquired(const AcquiredEvent& e) override {
    std::unique_lock lock(mutex_);
    let_go_.wait(lock, [&] { return free_; });
    lock.unlock();
    Recorder::acquired(e);
  }
  void let_go() {
    {
      std::lock_guard lock(mutex_);
      free_ = true;
    }
    let_go_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable let_go_;
  bool free_ = false;
};

TEST(Observer, OneThatBlocksBreaksNoLockAndItsEventsAreBoundedNotQueuedForever) {
  const auto blocker = std::make_shared<Blocker>();
  const Client client = observed_client(blocker);
  const std::string key = unique_key();
  // The watchdog keeps the lease through the block: renewals do not wait for the observer. (3 s:
  // a sanitized run may make a renewal late by more than a short lease leaves.)
  Mutex held(client, key, watched(seconds(3)));
  ASSERT_TRUE(held.try_lock());
  const std::string other = unique_key("cycles");
  Mutex cycling(client, other, one_attempt_options());
  // Two events a cycle: enough to fill the pending events past their bound.
  const int cycles = static_cast<int>(Observer::kMaxPendingEvents) / 2 + 10;
  for (int i = 0; i < cycles; ++i) {
    ASSERT_TRUE(cycling.try_lock());
    cycling.unlock();
  }
  EXPECT_GT(client.stats().observer_events_dropped, 0U);
  EXPECT_TRUE(held.inspect().held_by_me);
  EXPECT_TRUE(eventually([&] { return client.stats().renewals > 0; }));
  EXPECT_TRUE(held.inspect().held_by_me);
  blocker->let_go();
  held.unlock();
  EXPECT_TRUE(blocker->heard_prefix("acquired " + key));  // the first event, delivered once let go
}

}  // namespace
}  // namespace lockbridge::testing
