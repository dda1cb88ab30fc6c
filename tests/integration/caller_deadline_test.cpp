// A caller's deadline holds in the waits lockbridge makes before a command is sent: a checkout
// from a full connection pool (for locks, the latch and the semaphores) and asking the sentinels
// again. (The cluster's TRYAGAIN backoff: ClusterSplitKeys in cluster_errors_test.cpp.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <string>

#include "lockbridge/latch.hpp"
#include "lockbridge/leased_semaphore.hpp"
#include "lockbridge/semaphore.hpp"
#include "redis_test_support.hpp"
#include "silent_server.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

// A Client whose one pooled connection is busy in a BLPOP on `list` until something is pushed there.
class BusyPool {
 public:
  BusyPool() : client_(test_client(ClientOptions{.command_timeout = std::chrono::seconds(30), .pool_size = 1})) {
    // The pool's one connection, by its id: CLIENT LIST is the server's, and a test running beside
    // this one may have a BLPOP of its own in flight (taking it for ours, the try ran first).
    const std::string id = std::to_string(client_.command({"CLIENT", "ID"}).integer);
    blocked_ = std::async(std::launch::async, [this] { client_.command({"BLPOP", list_, "20"}); });
    const bool blocked = eventually([&] {
      return raw({"CLIENT", "LIST", "ID", id}).str.find("cmd=blpop") != std::string::npos;
    });
    if (!blocked) throw std::runtime_error("the BLPOP never started");
  }
  ~BusyPool() {
    raw({"LPUSH", list_, "done"});
    blocked_.wait();
  }
  const Client& client() const { return client_; }
  // The BLPOP still holds the pool's one connection (it ends after 20 s, or when this goes): a
  // call that waited for the connection could only have returned after it ended.
  bool still_busy() const { return blocked_.wait_for(std::chrono::seconds(0)) != std::future_status::ready; }

 private:
  const std::string list_ = unique_key("busy");
  const Client client_;
  std::future<void> blocked_;
};

TEST(CallerDeadlines, AFullPoolIsWaitedForOnlyUntilTheDeadline) {
  const BusyPool pool;
  Mutex mutex(pool.client(), unique_key(), token_options());
  const Error error = expect_error([&] { (void)mutex.try_lock_for(milliseconds(50)); });
  EXPECT_EQ(error.errc(), Errc::timeout);
  EXPECT_THAT(error.what(), HasSubstr("stayed busy until the caller's deadline"));
  EXPECT_FALSE(mutex.owns_lock());
  EXPECT_FALSE(raw({"EXISTS", mutex.key()}).integer);
  EXPECT_TRUE(pool.still_busy()) << "the try waited for the pool past its deadline";
}

TEST(CallerDeadlines, TheLatchAndTheSemaphoresWaitForAFullPoolOnlyUntilTheDeadline) {
  const BusyPool pool;
  const std::string key = unique_key();
  // Each try returns with the pool still busy: neither it nor an undo of it (the leased permit's
  // give-back after an acquire whose reply was lost) waited for the connection past the deadline.
  const auto busy_until_the_deadline = [&](const Error& error) {
    EXPECT_EQ(error.errc(), Errc::timeout);
    EXPECT_THAT(error.what(), HasSubstr("stayed busy until the caller's deadline"));
    EXPECT_TRUE(pool.still_busy()) << "the try waited for the pool past its deadline";
  };
  busy_until_the_deadline(expect_error([&] { (void)Latch(pool.client(), key).try_wait_for(milliseconds(50)); }));
  busy_until_the_deadline(expect_error([&] { (void)Semaphore(pool.client(), key).try_acquire_for(milliseconds(50)); }));
  busy_until_the_deadline(expect_error(
      [&] { (void)LeasedSemaphore(pool.client(), key).try_acquire_for(milliseconds(50), std::chrono::seconds(1)); }));
  EXPECT_FALSE(raw({"EXISTS", key}).integer);
}

TEST(CallerDeadlines, ASingleTryStillWaitsForAPooledConnection) {
  const std::string key = unique_key();
  std::future<bool> taken;
  {
    const BusyPool pool;
    taken = std::async(std::launch::async, [key, client = pool.client()] {
      Mutex mutex(client, key, token_options());
      const bool acquired = mutex.try_lock();
      if (acquired) mutex.unlock();
      return acquired;
    });
  }  // the BLPOP ends: the try gets the connection
  EXPECT_TRUE(taken.get());
}

TEST(CallerDeadlines, NoFurtherSentinelIsAskedOnceTheDeadlinePassed) {
  const SilentServer first;
  const SilentServer second;
  ClientOptions options;
  options.command_timeout = milliseconds(200);
  const Client client("redis-sentinel://" + first.address() + "," + second.address() + "/lbmaster", options);
  Mutex mutex(client, unique_key(), token_options());
  const Error error = expect_error([&] { (void)mutex.try_lock_for(milliseconds(10)); });
  EXPECT_EQ(error.errc(), Errc::io);
  EXPECT_THAT(error.what(), HasSubstr("the caller's deadline passed before the other sentinels were asked"));
}

}  // namespace
}  // namespace lockbridge::testing
