// Redlock over five independent masters (a redlock:// Client), each a redis-server this test
// starts on loopback: a lock is held on a majority, survives two masters down, fails cleanly with
// three down, rolls back a partial acquisition, and refuses what a quorum cannot give; each
// through both fronts where both serve it (RedlockFronts). The limits
// docs/guarantees.md states are shown too: a master that never answers costs each round the
// command timeout, a master restarted empty can give a second owner a majority, and a holder
// stalled past its validity is told so.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "front_lock.hpp"
#include "lockbridge/multi_mutex.hpp"
#include "redis_test_support.hpp"
#include "topology.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

MutexOptions redlock_options(milliseconds lease = milliseconds(10000)) {
  MutexOptions options = token_options();
  options.lease = lease;
  options.acquire_timeout = milliseconds(0);
  return options;
}

// The clock drift Redlock takes off every validity: 1% of the lease plus 2 ms (docs/design.md 13.2).
milliseconds drift(milliseconds lease) { return lease / 100 + milliseconds(2); }

class Redlock : public ::testing::Test {
 protected:
  // What each master holds at `key`, in URL order ("(nil)" where nothing, "down" where killed).
  // The master at index `paused` is not asked (a stopped server would only time out): "paused".
  std::vector<std::string> values_of(const std::string& key, int paused = -1) const {
    std::vector<std::string> values;
    for (int i = 0; i < static_cast<int>(masters_.masters.size()); ++i) {
      const auto& master = masters_.masters[i];
      values.push_back(i == paused ? "paused" : master->running() ? master->command({"GET", key}) : "down");
    }
    return values;
  }
  int holding(const std::string& key, const std::string& value, int paused = -1) const {
    const auto values = values_of(key, paused);
    return static_cast<int>(std::count(values.begin(), values.end(), value));
  }

  IndependentMasters masters_{5};
  const Client client_{masters_.url()};
  const std::string key_ = unique_key();
};

// The behaviour of a redlock:// lock through either front (front_lock.hpp): the async front sends
// each round on its pipeline to every master, on the loop, as the blocking one polls them.
class RedlockFronts : public Redlock, public ::testing::WithParamInterface<Front> {
 protected:
  // A lock on the test's key through the front under test, on Client number `client` (each its own
  // connections, as another process would have).
  std::unique_ptr<FrontLock> make(const MutexOptions& options, int client = 0,
                                  const ClientOptions& client_options = ClientOptions()) {
    while (static_cast<int>(clients_.size()) <= client) {
      clients_.emplace_back(masters_.url(), client_options);
      async_clients_.push_back(std::make_unique<AsyncClient>(runner_.io().get_executor(), clients_.back()));
    }
    if (GetParam() == Front::blocking) return std::make_unique<BlockingFrontLock>(clients_[client], key_, options);
    return std::make_unique<AsyncFrontLock>(runner_, *async_clients_[client], key_, options);
  }
  void TearDown() override { runner_.drain(); }

  std::deque<Client> clients_;
  LoopRunner runner_;
  std::vector<std::unique_ptr<AsyncClient>> async_clients_;  // after the runner: gone before it
};

TEST_P(RedlockFronts, HoldsOnEveryMasterAndReleasesEverywhere) {
  const auto mutex = make(redlock_options());
  ASSERT_TRUE(mutex->try_lock().result);
  EXPECT_EQ(holding(key_, mutex->value()), 5);
  for (const auto& master : masters_.masters) {
    const int pttl = std::stoi(master->command({"PTTL", key_}));
    EXPECT_GT(pttl, 0);
    EXPECT_LE(pttl, 10000);
  }
  // Valid for at most the lease less Redlock's drift and the round's time.
  EXPECT_LE(mutex->valid_for(), milliseconds(10000) - drift(milliseconds(10000)));
  EXPECT_GT(mutex->valid_for(), milliseconds(0));
  EXPECT_FALSE(mutex->unlock());
  EXPECT_EQ(values_of(key_), std::vector<std::string>(5, "(nil)"));
}

TEST_F(Redlock, InspectSeesTheValueOfAMajority) {
  Mutex mutex(client_, key_, redlock_options());
  ASSERT_TRUE(mutex.try_lock());
  const LockInfo info = mutex.inspect();
  EXPECT_TRUE(info.exists);
  EXPECT_TRUE(info.held_by_me);
  EXPECT_EQ(info.value, mutex.value());
  mutex.unlock();
  EXPECT_FALSE(mutex.inspect().exists);
}

TEST_P(RedlockFronts, OneOwnerAtATime) {
  const auto first = make(redlock_options());
  const auto second = make(redlock_options(), 1);
  ASSERT_TRUE(first->try_lock().result);
  const Outcome refused = second->try_lock();
  EXPECT_FALSE(refused.error) << refused.error.message();
  EXPECT_FALSE(refused.result);
  // The loser left nothing behind: every master still holds the first owner's value.
  EXPECT_EQ(holding(key_, first->value()), 5);
  EXPECT_FALSE(first->unlock());
  EXPECT_TRUE(second->try_lock().result);
  EXPECT_FALSE(second->unlock());
}

TEST_P(RedlockFronts, AWaiterPollsUntilTheHolderReleases) {
  const auto holder = make(redlock_options());
  MutexOptions patient = redlock_options();
  patient.retry = RetryPolicy::fixed_retries(1000, milliseconds(20));
  const auto waiter = make(patient, 1);
  ASSERT_TRUE(holder->try_lock().result);
  waiter->start_lock_for(std::chrono::seconds(30));
  waiter->let_run_for(milliseconds(200));
  EXPECT_FALSE(waiter->owns_lock());
  EXPECT_FALSE(holder->unlock());
  const Outcome waited = waiter->finish_wait();
  EXPECT_FALSE(waited.error) << waited.error.message();
  EXPECT_TRUE(waited.result);
  EXPECT_EQ(holding(key_, waiter->value()), 5);
  EXPECT_FALSE(waiter->unlock());
}

TEST_P(RedlockFronts, AcquiresWithTwoOfFiveMastersDown) {
  masters_.masters[1]->kill();
  masters_.masters[3]->kill();
  const auto mutex = make(redlock_options());
  ASSERT_TRUE(mutex->try_lock().result);
  EXPECT_EQ(holding(key_, mutex->value()), 3);
  EXPECT_TRUE(mutex->extend(milliseconds(20000)).result);  // three of five is a majority for extend too
  EXPECT_FALSE(make(redlock_options(), 1)->try_lock().result);
  EXPECT_FALSE(mutex->unlock());
  EXPECT_EQ(holding(key_, "(nil)"), 3);
}

TEST_P(RedlockFronts, FailsCleanlyWithThreeMastersDown) {
  for (const int i : {0, 2, 4}) masters_.masters[i]->kill();
  const auto mutex = make(redlock_options());
  EXPECT_EQ(mutex->try_lock().error, make_error_code(Errc::no_quorum));
  EXPECT_FALSE(mutex->owns_lock());
  // The two live masters had set it: both were rolled back before the error reached us.
  EXPECT_EQ(holding(key_, "(nil)"), 2);
  // A wait gives the same error at once instead of waiting out its timeout.
  const auto patient = make(redlock_options());
  patient->start_lock_for(std::chrono::seconds(60));
  EXPECT_EQ(patient->finish_wait().error, make_error_code(Errc::no_quorum));
}

TEST_F(Redlock, TheNoQuorumErrorSaysHowManyAnsweredAndNamesEachFailure) {
  for (const int i : {0, 2, 4}) masters_.masters[i]->kill();
  Mutex mutex(client_, key_, redlock_options());
  const Error error = expect_error([&] { (void)mutex.try_lock(); });
  EXPECT_EQ(error.errc(), Errc::no_quorum);
  EXPECT_THAT(error.what(), HasSubstr("only 2 of 5 masters answered; Redlock needs 3"));
  EXPECT_THAT(error.what(), HasSubstr(masters_.masters[0]->address()));
}

TEST_P(RedlockFronts, APartialAcquisitionIsRolledBack) {
  // Another owner holds the key on three masters: we can win only two, which is not a majority.
  for (const int i : {0, 1, 2}) masters_.masters[i]->command({"SET", key_, "someone-else", "PX", "60000"});
  const Outcome attempt = make(redlock_options())->try_lock();
  EXPECT_FALSE(attempt.error) << attempt.error.message();
  EXPECT_FALSE(attempt.result);
  EXPECT_EQ(values_of(key_),
            (std::vector<std::string>{"someone-else", "someone-else", "someone-else", "(nil)", "(nil)"}));
}

TEST_P(RedlockFronts, AnExtendWithoutAMajorityEndsTheHold) {
  const auto mutex = make(redlock_options());
  ASSERT_TRUE(mutex->try_lock().result);
  for (const int i : {0, 1, 2}) masters_.masters[i]->kill();
  EXPECT_FALSE(mutex->extend(milliseconds(20000)).result);
  EXPECT_FALSE(mutex->owns_lock());
  // The minority's copies were deleted: they would only have blocked the next holder.
  EXPECT_EQ(holding(key_, "(nil)"), 2);
}

TEST_P(RedlockFronts, AMasterThatNeverAnswersCostsEveryRoundTheCommandTimeout) {
  // A stopped master (a long GC pause, a frozen VM) still accepts connections, so it fails no
  // round at once: every round waits for it until the command timeout. A round cannot end before
  // that deadline, so the validity (counted from before the round was sent) is at most
  // lease - drift - command timeout: no timing assumption, only the algorithm. The other four are
  // a majority, so nothing else changes and nothing hangs.
  constexpr milliseconds kCommandTimeout(1000);  // the default, spelled out: the bound depends on it
  constexpr milliseconds kLease(10000);
  constexpr int kPaused = 2;  // not the first master, where a Client loads its scripts
  ClientOptions options;
  options.command_timeout = kCommandTimeout;
  masters_.masters[kPaused]->pause();  // never resumed: the fixture kills it, stopped or not

  for (int client = 0; client < 2; ++client) {  // a second client, while the master is still stopped: the same
    const auto mutex = make(redlock_options(kLease), client, options);
    ASSERT_TRUE(mutex->try_lock().result);
    EXPECT_GT(mutex->valid_for(), milliseconds(0));
    EXPECT_LE(mutex->valid_for(), kLease - drift(kLease) - kCommandTimeout);
    EXPECT_EQ(holding(key_, mutex->value(), kPaused), 4);
    EXPECT_FALSE(mutex->unlock());  // a round of its own, which waits out the stopped master too
    EXPECT_EQ(holding(key_, "(nil)", kPaused), 4);
  }
}

TEST_F(Redlock, AMasterRestartedEmptyCanJoinASecondOwnersMajorityWhileTheHolderHadExactlyOne) {
  // The limit docs/guarantees.md states, shown rather than fixed: lockbridge cannot tell a master
  // that lost our copy in a restart without persistence from one that never had it. Redis's
  // Redlock page asks for restarts delayed by the longest lease (or AOF with fsync always).
  masters_.masters[3]->kill();
  masters_.masters[4]->kill();
  ClientOptions options = quick_failing_client();
  // The first holder's Client dials the restarted masters as soon as they are back, not after the
  // reconnect backoff it started when they were down (its inspect() below needs three answers).
  options.reconnect_backoff = milliseconds(0);
  // A long lease: the first holder must still be inside its validity after three restarts.
  Mutex first(Client(masters_.url(), options), key_, redlock_options(milliseconds(30000)));
  ASSERT_TRUE(first.try_lock());
  const std::string a = first.value();
  ASSERT_EQ(values_of(key_), (std::vector<std::string>{a, a, a, "down", "down"}));  // exactly a majority

  // One of its three crashes and comes back empty, as do the two that were down.
  for (const int i : {2, 3, 4}) masters_.masters[i]->restart();
  Mutex second(Client(masters_.url()), key_, redlock_options());
  ASSERT_TRUE(second.try_lock());
  const std::string b = second.value();
  // Two holders at once, each inside its validity.
  EXPECT_TRUE(first.owns_lock());
  EXPECT_GT(first.valid_for(), milliseconds(0));
  EXPECT_TRUE(second.owns_lock());
  EXPECT_GT(second.valid_for(), milliseconds(0));
  EXPECT_EQ(values_of(key_), (std::vector<std::string>{a, a, b, b, b}));
  // A first holder that asks the masters learns that its value no longer holds a majority.
  EXPECT_FALSE(first.inspect().held_by_me);
  EXPECT_TRUE(second.inspect().held_by_me);

  // Its release deletes its own copies only: the second owner keeps its majority.
  first.unlock();
  EXPECT_FALSE(first.last_error());  // two masters still had its value
  EXPECT_EQ(values_of(key_), (std::vector<std::string>{"(nil)", "(nil)", b, b, b}));
  EXPECT_TRUE(second.inspect().held_by_me);
  second.unlock();
  EXPECT_FALSE(second.last_error());
}

TEST_F(Redlock, AHolderStalledPastItsValidityIsToldItNoLongerHolds) {
  // Kleppmann's pause: the holder stalls (a GC pause, a stopped VM) without renewing; its copies'
  // TTLs run out and another client wins a majority. The library cannot stop the stalled holder
  // from acting when it wakes, but every check it can make says the lock is gone, and its release
  // touches nothing of the new owner's. The 2 s lease leaves the first acquisition room on a
  // slow machine; the takeover waits for it to run out.
  Takeover takeover = take_over_after_lease_end(key_, redlock_options(), masters_.url(), milliseconds(2000));
  Mutex& stalled = takeover.stalled;
  Mutex& next = takeover.next;
  // The new majority formed only once the stalled holder's copies' TTLs had run out on three
  // masters, and its validity ends before its copies do (it counts from before its round was sent,
  // less the drift): zero by logic, not by timing.
  EXPECT_EQ(stalled.valid_for(), milliseconds(0));
  // The lease keeper ends the hold when the validity ends, on its own thread: whenever it runs.
  EXPECT_TRUE(eventually([&] { return !stalled.owns_lock(); }));
  const LockInfo seen = stalled.inspect();
  EXPECT_TRUE(seen.exists);
  EXPECT_EQ(seen.value, next.value());
  EXPECT_FALSE(seen.held_by_me);

  // The new holder won at least a majority: a master whose stalled copy's TTL had not run out yet
  // when it tried kept that copy, until its TTL ran out too (wait for that, so no copy of ours is
  // left).
  // Then the stalled holder's release finds nothing of its own and deletes none of the new owner's.
  ASSERT_TRUE(eventually([&] { return holding(key_, stalled.value()) == 0; }));
  const int copies = holding(key_, next.value());
  EXPECT_GE(copies, 3);
  stalled.unlock();
  EXPECT_EQ(stalled.last_error(), make_error_code(Errc::lease_lost));
  EXPECT_EQ(holding(key_, next.value()), copies);
  EXPECT_TRUE(next.owns_lock());
  next.unlock();
  EXPECT_FALSE(next.last_error());
}

TEST_P(RedlockFronts, AWaitersBackoffNeverSleepsPastTheHoldersLease) {
  // The holder vanishes without releasing; its 300 ms lease ends on every master. With a backoff
  // of a year the waiter would sleep far past that unless the round told it when the lease ends.
  Mutex crashed(client_, key_, redlock_options(milliseconds(300)));
  ASSERT_TRUE(crashed.try_lock());
  crashed.abandon();
  MutexOptions patient = redlock_options();
  patient.retry = RetryPolicy::backoff_with_jitter(std::chrono::hours(24 * 365), std::chrono::hours(24 * 365));
  const auto waiter = make(patient);
  EXPECT_TRUE(waiter->try_lock_for(std::chrono::seconds(30)).result);
  EXPECT_FALSE(waiter->unlock());
}

TEST_P(RedlockFronts, AKeyOfAnotherTypeOnAMajorityIsWrongType) {
  for (const int i : {0, 1, 2}) masters_.masters[i]->command({"HSET", key_, "f", "v"});
  EXPECT_EQ(make(redlock_options())->try_lock().error, make_error_code(Errc::wrong_type));
  EXPECT_EQ(holding(key_, "(nil)"), 2);  // rolled back where it had been set
}

TEST_F(Redlock, RefusesWhatAQuorumCannotGive) {
  const auto refusal = [&](const MutexOptions& options) {
    return std::string(expect_error([&] { Mutex(client_, key_, options); }).what());
  };
  EXPECT_THAT(refusal(hardened_options()), HasSubstr("needs the token strategy, not legacy"));
  EXPECT_THAT(refusal(faithful_options()), HasSubstr("docs/guarantees.md"));
  EXPECT_THAT(refusal(MutexOptions::redisson_lock()), HasSubstr("not redisson"));
  MutexOptions fencing = redlock_options();
  fencing.token.fencing = true;
  EXPECT_THAT(refusal(fencing), HasSubstr("fencing"));
  MutexOptions fair = redlock_options();
  fair.wait_mode = WaitMode::fair;
  EXPECT_THAT(refusal(fair), HasSubstr("fair queue"));
  MutexOptions watchdog = redlock_options();
  watchdog.watchdog.enabled = true;
  EXPECT_THAT(refusal(watchdog), HasSubstr("watchdog"));
  MutexOptions acknowledged = redlock_options();
  acknowledged.replica_ack.replicas = 1;
  EXPECT_THAT(refusal(acknowledged), HasSubstr("replica_ack"));
  EXPECT_EQ(expect_error([&] { MultiMutex(client_, {key_, key_ + "2"}, redlock_options()); }).errc(), Errc::bad_option);
}

TEST_F(Redlock, CompareRunsTheColumnsRedlockAllowsAndSaysWhichItSkips) {
  const std::string json = test_dir() + "/redlock-compare-" + unique_key() + ".json";
  const CliRun run =
      run_cli("compare --url '" + masters_.url() + "' --duration 0.1 --no-plot --json '" + json + "'", false);
  EXPECT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.output, HasSubstr("token, poll (as peers)"));
  EXPECT_THAT(run.errors, HasSubstr("skipping 'legacy faithful'"));
  EXPECT_THAT(run.errors, HasSubstr("skipping 'redisson'"));
  std::remove(json.c_str());
}

TEST_F(Redlock, BenchAcceptsTheUrlAndSeesNoViolation) {
  const CliRun run = run_cli("bench --url '" + masters_.url() + "' --clients 4 --ops 200 --json", /*with_url=*/false);
  ASSERT_EQ(run.exit_code, 0) << run;
  ASSERT_EQ(run.lines.size(), 1U) << run;
  EXPECT_EQ(run.lines[0]["violations"], 0) << run;
  EXPECT_EQ(run.lines[0]["errors"], 0) << run;
  EXPECT_GE(run.lines[0]["acquisitions"].get<int>(), 200) << run;
}

INSTANTIATE_TEST_SUITE_P(BothFronts, RedlockFronts, ::testing::Values(Front::blocking, Front::async),
                         [](const auto& param_info) {
                           return param_info.param == Front::blocking ? "blocking" : "async";
                         });

}  // namespace
}  // namespace lockbridge::testing
