// The public async front (lockbridge/asio.hpp) on standalone Asio against the fixture's real
// server: coroutines (use_awaitable), callbacks and deferred; cancellation through Asio's
// cancellation slots (awaitable_operators) ends a waiting acquire at once and leaves nothing held;
// many coroutines on one key, one thread, each acquire in turn with no two holders; a server that
// is down fails the lock instead of leaving it waiting.
#include <gtest/gtest.h>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>

#include <chrono>
#include <csignal>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/lock_target.hpp"
#include "lockbridge/asio.hpp"
#include "loop_runner.hpp"
#include "redis/client_state.hpp"
#include "redis_test_support.hpp"
#include "strategies/companion_keys.hpp"
#include "waiting/local_line.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

class AsyncMutexTest : public ::testing::Test {
 protected:
  static MutexOptions async_options() {
    MutexOptions options = token_options();
    options.acquire_timeout = seconds(30);
    return options;
  }
  // Runs `body` as a coroutine on the io_context until it ends (10 s at most: a bound, not a
  // timing); rethrows what it threw.
  void run(std::function<asio::awaitable<void>()> body) {
    std::exception_ptr failure;
    bool done = false;
    asio::co_spawn(io_, std::move(body), [&](std::exception_ptr error) {
      failure = error;
      done = true;
    });
    run_until([&] { return done; });
    ASSERT_TRUE(done) << "the coroutine did not end within 10 s";
    if (failure) std::rethrow_exception(failure);
  }
  template <class Done>
  void run_until(Done&& done) {
    (void)runner_.run_until(std::forward<Done>(done));  // each test asserts what it waited for
  }

  LoopRunner runner_;  // drains what the test's locks left to finish before its io_context goes
  asio::io_context& io_ = runner_.io();
};

TEST_F(AsyncMutexTest, ACoroutineLocksAndUnlocks) {
  AsyncClient client(io_.get_executor(), test_client());
  const std::string key = unique_key();
  AsyncMutex mutex(client, key, async_options());
  run([&]() -> asio::awaitable<void> {
    co_await mutex.async_lock(asio::use_awaitable);
    EXPECT_TRUE(mutex.owns_lock());
    EXPECT_EQ(raw({"GET", key}).str, mutex.value());
    co_await mutex.async_unlock(asio::use_awaitable);
    EXPECT_FALSE(mutex.owns_lock());
  });
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

TEST_F(AsyncMutexTest, CallbacksCompleteOnTheClientsExecutorNeverInsideTheCall) {
  AsyncClient client(io_.get_executor(), test_client());
  const std::string key = unique_key();
  Mutex holder(test_client(), key, token_options());
  ASSERT_TRUE(holder.try_lock());
  AsyncMutex mutex(client, key, async_options());
  std::optional<std::error_code> error;
  std::optional<bool> acquired;
  mutex.async_try_lock([&](std::error_code e, bool got) {
    error = e;
    acquired = got;
  });
  EXPECT_FALSE(acquired.has_value());  // not inside the call
  run_until([&] { return acquired.has_value(); });
  ASSERT_TRUE(acquired.has_value());
  EXPECT_FALSE(*error) << error->message();
  EXPECT_FALSE(*acquired);  // held by the blocking holder
  // A second operation while one runs is refused, and the first goes on.
  std::optional<std::error_code> first, second;
  mutex.async_try_lock_for(seconds(5), [&](std::error_code e, bool) { first = e; });
  mutex.async_try_lock([&](std::error_code e, bool) { second = e; });
  run_until([&] { return second.has_value(); });
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(*second, make_error_code(Errc::bad_option));
  holder.unlock();
  run_until([&] { return first.has_value(); });
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(*first);
  EXPECT_TRUE(mutex.owns_lock());
  bool unlocked = false;
  mutex.async_unlock([&](std::error_code e) { unlocked = !e; });
  run_until([&] { return unlocked; });
  EXPECT_TRUE(unlocked);
}

TEST_F(AsyncMutexTest, CancellingAWaitingLockEndsItAtOnceAndLeavesNothingHeld) {
  using namespace asio::experimental::awaitable_operators;
  AsyncClient client(io_.get_executor(), test_client());
  const std::string key = unique_key();
  Mutex holder(test_client(), key, token_options());
  ASSERT_TRUE(holder.try_lock());
  MutexOptions options = async_options();
  options.retry = RetryPolicy::fixed_retries(3, seconds(60));  // only a release would wake it
  AsyncMutex mutex(client, key, options);
  run([&]() -> asio::awaitable<void> {
    asio::steady_timer give_up(co_await asio::this_coro::executor, milliseconds(300));
    // The timer wins: the lock's wait is cancelled through its cancellation slot.
    const auto first = co_await (mutex.async_lock(asio::use_awaitable) || give_up.async_wait(asio::use_awaitable));
    EXPECT_EQ(first.index(), 1u);
  });
  EXPECT_FALSE(mutex.owns_lock());
  EXPECT_EQ(raw({"GET", key}).str, holder.value());
  // The cancelled waiter leaves the queue by itself.
  run_until([&] { return raw({"LLEN", detail::waiter_queue(key)}).integer == 0; });
  EXPECT_EQ(raw({"LLEN", detail::waiter_queue(key)}).integer, 0);
  holder.unlock();
  // And the lock can be taken again.
  run([&]() -> asio::awaitable<void> {
    const bool got = co_await mutex.async_try_lock(asio::use_awaitable);
    EXPECT_TRUE(got);
    co_await mutex.async_unlock(asio::use_awaitable);
  });
}

TEST_F(AsyncMutexTest, ManyCoroutinesOnOneKeyOneThreadEachAcquireInTurn) {
  AsyncClient client(io_.get_executor(), test_client());
  const std::string key = unique_key();
  constexpr int kWaiters = 100;
  std::vector<std::unique_ptr<AsyncMutex>> mutexes;
  for (int i = 0; i < kWaiters; ++i) mutexes.push_back(std::make_unique<AsyncMutex>(client, key, async_options()));
  int holding = 0;
  int most_at_once = 0;
  int acquired = 0;
  int finished = 0;
  for (auto& mutex : mutexes) {
    asio::co_spawn(
        io_,
        [&, m = mutex.get()]() -> asio::awaitable<void> {
          co_await m->async_lock(asio::use_awaitable);
          ++acquired;
          most_at_once = std::max(most_at_once, ++holding);
          asio::steady_timer hold(co_await asio::this_coro::executor, milliseconds(1));
          co_await hold.async_wait(asio::use_awaitable);
          --holding;
          co_await m->async_unlock(asio::use_awaitable);
        },
        [&](std::exception_ptr error) {
          EXPECT_FALSE(error);
          ++finished;
        });
  }
  run_until([&] { return finished == kWaiters; });
  EXPECT_EQ(finished, kWaiters);
  EXPECT_EQ(acquired, kWaiters);
  EXPECT_EQ(most_at_once, 1);
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

// A user whose ACL refuses scripts takes the lock with SET NX, and gives it back with WATCH, GET,
// MULTI, DEL, EXEC, still owner-checked. Those span several requests, which other locks' requests
// on the shared pipeline must not join: they go on a connection of the client's own for
// transactions, one at a time.
TEST_F(AsyncMutexTest, AUserThatMayNotRunScriptsStillReleasesItsLockAndOnlyItsOwn) {
  const AclUser user({"+@all", "-@scripting"});
  AsyncClient client(io_.get_executor(), Client(user.url()));
  const std::string key = unique_key();
  AsyncMutex mutex(client, key, async_options());
  run([&]() -> asio::awaitable<void> {
    co_await mutex.async_lock(asio::use_awaitable);
    co_await mutex.async_unlock(asio::use_awaitable);
    EXPECT_EQ(raw({"EXISTS", key}).integer, 0) << "released, not left for its whole lease";
    co_await mutex.async_lock(asio::use_awaitable);
    raw({"SET", key, "someone-else", "PX", "5000"});  // the lease ran out and another took it
    const auto [error] = co_await mutex.async_unlock(asio::experimental::as_tuple(asio::use_awaitable));
    EXPECT_EQ(error, make_error_code(Errc::lease_lost)) << error.message();
  });
  EXPECT_EQ(raw({"GET", key}).str, "someone-else");
  raw({"DEL", key});
}

TEST_F(AsyncMutexTest, ScriptlessReleasesOfManyLocksTakeTurnsOnTheClientsConnectionForTransactions) {
  const AclUser user({"+@all", "-@scripting"});
  AsyncClient client(io_.get_executor(), Client(user.url()));
  constexpr int kLocks = 24;
  std::vector<std::string> keys;
  std::vector<std::unique_ptr<AsyncMutex>> mutexes;
  for (int i = 0; i < kLocks; ++i) {
    keys.push_back(unique_key(std::to_string(i)));
    mutexes.push_back(std::make_unique<AsyncMutex>(client, keys.back(), async_options()));
  }
  int finished = 0;
  std::vector<std::error_code> errors;
  for (auto& mutex : mutexes) {
    asio::co_spawn(
        io_,
        [&, m = mutex.get()]() -> asio::awaitable<void> {
          for (int cycle = 0; cycle < 5; ++cycle) {  // releases and acquisitions interleave on the loop
            co_await m->async_lock(asio::use_awaitable);
            const auto [error] = co_await m->async_unlock(asio::experimental::as_tuple(asio::use_awaitable));
            if (error) errors.push_back(error);
          }
        },
        [&](std::exception_ptr error) {
          EXPECT_FALSE(error);
          ++finished;
        });
  }
  run_until([&] { return finished == kLocks; });
  EXPECT_EQ(finished, kLocks);
  EXPECT_TRUE(errors.empty()) << errors.size() << " releases failed, the first: " << errors.front().message();
  for (const std::string& key : keys) EXPECT_EQ(raw({"EXISTS", key}).integer, 0) << key;
  // The pipeline every lock shares, and the one connection for transactions.
  std::string list = raw({"CLIENT", "LIST"}).str;
  int connections = 0;
  for (std::size_t at = list.find(" user=" + user.name() + " "); at != std::string::npos;
       at = list.find(" user=" + user.name() + " ", at + 1))
    ++connections;
  EXPECT_EQ(connections, 2) << list;
}

TEST_F(AsyncMutexTest, AUserThatMayRunNeitherScriptsNorWatchIsToldTheLockStaysUntilItsLeaseEnds) {
  const AclUser user({"+@all", "-@scripting", "-watch"});
  AsyncClient client(io_.get_executor(), Client(user.url()));
  const std::string key = unique_key();
  AsyncMutex mutex(client, key, async_options());
  run([&]() -> asio::awaitable<void> {
    co_await mutex.async_lock(asio::use_awaitable);
    const auto [error] = co_await mutex.async_unlock(asio::experimental::as_tuple(asio::use_awaitable));
    EXPECT_EQ(error, make_error_code(Errc::server_reply)) << error.message();
  });
  EXPECT_EQ(raw({"EXISTS", key}).integer, 1) << "the lock stays until its lease ends";
  raw({"DEL", key});
}

// Both fronts wait in the one process-local line: a blocking thread and a coroutine on one key are
// served in the order they came, either way round, and a release here goes to the first in line
// directly. Without the line, the blocking waiter, woken in place, would win whenever it came.
TEST_F(AsyncMutexTest, ABlockingAndAnAsyncWaiterOnOneKeyInOneProcessAreServedInArrivalOrder) {
  AsyncClient client(io_.get_executor(), test_client());
  for (const bool async_first : {true, false}) {
    SCOPED_TRACE(async_first ? "the coroutine came first" : "the thread came first");
    const std::string key = unique_key();
    const std::string name = detail::lock_line_name(client.client().state()->url, std::span(&key, 1));
    const auto line = detail::LocalLine::for_lock(name);
    Mutex holder(test_client(), key, token_options());
    ASSERT_TRUE(holder.try_lock());
    std::mutex served_mutex;
    std::vector<std::string> served;
    const auto serve = [&](const char* who) {
      std::lock_guard lock(served_mutex);
      served.emplace_back(who);
    };
    const auto served_count = [&] {
      std::lock_guard lock(served_mutex);
      return served.size();
    };
    AsyncMutex async_waiter(client, key, async_options());
    bool async_done = false;
    const auto start_async = [&] {
      asio::co_spawn(
          io_,
          [&]() -> asio::awaitable<void> {
            co_await async_waiter.async_lock(asio::use_awaitable);
            serve("async");
            co_await async_waiter.async_unlock(asio::use_awaitable);
          },
          [&](std::exception_ptr error) {
            EXPECT_FALSE(error);
            async_done = true;
          });
    };
    std::optional<std::thread> blocking_waiter;
    const auto start_blocking = [&] {
      blocking_waiter.emplace([&] {
        Mutex mutex(test_client(), key, async_options());
        mutex.lock();
        serve("blocking");
        mutex.unlock();
      });
    };
    // Each waiter is in line before the next one comes, and both before the holder lets go.
    if (async_first)
      start_async();
    else
      start_blocking();
    run_until([&] { return line->waiting() == 1; });
    ASSERT_EQ(line->waiting(), 1u);
    if (async_first)
      start_blocking();
    else
      start_async();
    run_until([&] { return line->waiting() == 2; });
    ASSERT_EQ(line->waiting(), 2u);
    holder.unlock();
    run_until([&] { return async_done && served_count() == 2; });
    blocking_waiter->join();
    ASSERT_TRUE(async_done);
    const std::vector<std::string> expected =
        async_first ? std::vector<std::string>{"async", "blocking"} : std::vector<std::string>{"blocking", "async"};
    EXPECT_EQ(served, expected);
    EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
  }
}

// A holder in another process (the CLI) lets go: its release's message wakes the coroutine, which
// waits in Redis with a retry interval far beyond the bound, so only the message can end its wait.
TEST_F(AsyncMutexTest, AReleaseInAnotherProcessWakesTheAsyncWaiter) {
  AsyncClient client(io_.get_executor(), test_client());
  const std::string key = unique_key();
  BackgroundCli holder("hold '" + key + "' --json --for 60000");
  const auto acquired_line = holder.next_line();
  ASSERT_TRUE(acquired_line.has_value());
  ASSERT_EQ(nlohmann::json::parse(*acquired_line)["acquired"], true);
  MutexOptions options = async_options();
  options.wait_mode = WaitMode::notify;
  options.retry = RetryPolicy::fixed_retries(3, seconds(60));
  AsyncMutex mutex(client, key, options);
  std::optional<std::error_code> error;
  mutex.async_lock([&](std::error_code e) { error = e; });
  run_until([&] { return raw({"LLEN", detail::waiter_queue(key)}).integer == 1; });
  ASSERT_EQ(raw({"LLEN", detail::waiter_queue(key)}).integer, 1) << "the coroutine is queued in Redis";
  ASSERT_FALSE(error.has_value());
  ::kill(holder.pid(), SIGTERM);  // the CLI releases the lock, then exits
  run_until([&] { return error.has_value(); });
  ASSERT_TRUE(error.has_value()) << "not woken: the retry policy would only try again after 60 s";
  EXPECT_FALSE(*error) << error->message();
  EXPECT_TRUE(mutex.owns_lock());
  EXPECT_EQ(raw({"GET", key}).str, mutex.value());
  EXPECT_EQ(holder.finish().exit_code, 130);
  std::optional<std::error_code> released;
  mutex.async_unlock([&](std::error_code e) { released = e; });
  run_until([&] { return released.has_value(); });
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

// The key-set form: every key or none, one token; a wait on a set is woken by the release of the
// key that blocked it.
TEST_F(AsyncMutexTest, AKeySetIsTakenAllOrNoneAndItsWaitIsWokenByTheBlockingKeysRelease) {
  AsyncClient client(io_.get_executor(), test_client());
  const std::string first = unique_key("{set}:a");
  const std::string second = unique_key("{set}:b");
  MutexOptions options = async_options();
  options.wait_mode = WaitMode::notify;
  options.retry = RetryPolicy::fixed_retries(3, seconds(60));
  AsyncMultiMutex set(client, {second, first, second}, options);
  EXPECT_EQ(set.keys(), (std::vector<std::string>{std::min(first, second), std::max(first, second)}));
  Mutex blocker(test_client(), second, token_options());
  ASSERT_TRUE(blocker.try_lock());
  run([&]() -> asio::awaitable<void> {
    const bool got = co_await set.async_try_lock(asio::use_awaitable);
    EXPECT_FALSE(got);
  });
  EXPECT_EQ(raw({"EXISTS", first}).integer, 0) << "nothing written when one key is held";
  std::optional<std::error_code> error;
  set.async_lock([&](std::error_code e) { error = e; });
  run_until([&] { return raw({"LLEN", detail::waiter_queue(set.keys().front())}).integer == 1; });
  ASSERT_FALSE(error.has_value());
  blocker.unlock();
  run_until([&] { return error.has_value(); });
  ASSERT_TRUE(error.has_value()) << "not woken: the retry policy would only try again after 60 s";
  EXPECT_FALSE(*error) << error->message();
  EXPECT_TRUE(set.owns_lock());
  EXPECT_EQ(raw({"GET", first}).str, set.value());
  EXPECT_EQ(raw({"GET", second}).str, set.value());
  run([&]() -> asio::awaitable<void> { co_await set.async_unlock(asio::use_awaitable); });
  EXPECT_EQ(raw({"EXISTS", first}).integer, 0);
  EXPECT_EQ(raw({"EXISTS", second}).integer, 0);
}

TEST_F(AsyncMutexTest, AKeySetRefusesWhatMultiMutexRefuses) {
  AsyncClient client(io_.get_executor(), test_client());
  const auto refused = [&](std::vector<std::string> keys, MutexOptions options) {
    try {
      AsyncMultiMutex set(client, std::move(keys), std::move(options));
      return false;
    } catch (const Error& error) {
      return error.errc() == Errc::bad_option;
    }
  };
  EXPECT_TRUE(refused({}, async_options()));
  EXPECT_TRUE(refused({"a", ""}, async_options()));
  MutexOptions legacy = async_options();
  legacy.strategy = StrategyKind::legacy;
  EXPECT_TRUE(refused({"a", "b"}, legacy));
  MutexOptions fair = async_options();
  fair.wait_mode = WaitMode::fair;
  EXPECT_TRUE(refused({"a", "b"}, fair));
}

TEST_F(AsyncMutexTest, ALockDestroyedWhileHeldIsReleasedInTheBackground) {
  AsyncClient client(io_.get_executor(), test_client());
  const std::string key = unique_key();
  auto mutex = std::make_unique<AsyncMutex>(client, key, async_options());
  run([&]() -> asio::awaitable<void> { co_await mutex->async_lock(asio::use_awaitable); });
  ASSERT_EQ(raw({"EXISTS", key}).integer, 1);
  mutex.reset();
  run_until([&] { return raw({"EXISTS", key}).integer == 0; });
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

TEST_F(AsyncMutexTest, AServerThatIsDownFailsTheLockInsteadOfLeavingItWaiting) {
  AsyncClient client(io_.get_executor(), Client("redis://127.0.0.1:1"));
  AsyncMutex mutex(client, "down", async_options());
  std::optional<std::error_code> error;
  mutex.async_lock([&](std::error_code e) { error = e; });
  run_until([&] { return error.has_value(); });
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(*error, make_error_code(Errc::io)) << error->message();
}

}  // namespace
}  // namespace lockbridge::testing
