// AsyncSharedMutex: Redisson's read/write lock through the async front (EventSharedMutex under it),
// on the fixture's redis-server with a Java peer played by Redisson 4.7.0's scripts: readers of
// both fronts and of Java hold together, a writer alone, an async writer wakes on a Java reader's
// release without a thread waiting, and a reader cannot upgrade. Waiters poll only once a minute,
// so a wake-up that did not come fails the test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <system_error>

#include "lockbridge/asio.hpp"
#include "lockbridge/shared_mutex.hpp"
#include "loop_runner.hpp"
#include "redis_test_support.hpp"
#include "redisson_peer.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::seconds;

constexpr char kAsyncJavaReader[] = "8b0c2a1e-0000-4000-8000-000000000000:41";

class AsyncSharedMutexTest : public ::testing::Test {
 protected:
  // Acquires `side` with a wait of `wait`: its outcome, once the loop has run it.
  std::pair<std::error_code, bool> acquire(AsyncLock& side, std::chrono::milliseconds wait) {
    std::optional<std::pair<std::error_code, bool>> outcome;
    side.async_try_lock_for(wait, [&](std::error_code error, bool acquired) { outcome.emplace(error, acquired); });
    EXPECT_TRUE(runner_.run_until([&] { return outcome.has_value(); }));
    return outcome.value_or(std::make_pair(make_error_code(Errc::timeout), false));
  }
  std::error_code release(AsyncLock& side) {
    std::optional<std::error_code> released;
    side.async_unlock([&](std::error_code error) { released = error; });
    EXPECT_TRUE(runner_.run_until([&] { return released.has_value(); }));
    return released.value_or(make_error_code(Errc::timeout));
  }
  static MutexOptions message_only() { return minute_poll_waiter(MutexOptions::redisson_lock()); }

  void TearDown() override { runner_.drain(); }

  LoopRunner runner_;
  AsyncClient client_{runner_.io().get_executor(), test_client()};
};

TEST_F(AsyncSharedMutexTest, ReadersOfBothFrontsAndJavaHoldTogetherAndAWriterAlone) {
  const std::string key = unique_key();
  AsyncSharedMutex first(client_, key, message_only());
  AsyncSharedMutex writer(client_, key, message_only());
  SharedMutex blocking(test_client(), key, message_only());
  ASSERT_EQ(acquire(first.shared(), std::chrono::milliseconds(0)), std::make_pair(std::error_code(), true));
  ASSERT_TRUE(blocking.try_lock_shared());
  ASSERT_TRUE(raw(redisson_read_lock_command(key, kAsyncJavaReader)).is_nil());
  EXPECT_EQ(raw({"HGET", key, "mode"}).str, "read");
  EXPECT_EQ(acquire(writer.exclusive(), std::chrono::milliseconds(0)), std::make_pair(std::error_code(), false));
  EXPECT_FALSE(release(first.shared()));
  blocking.unlock_shared();
  EXPECT_EQ(raw(redisson_read_unlock_command(key, kAsyncJavaReader)).integer, 1);
  ASSERT_EQ(acquire(writer.exclusive(), std::chrono::milliseconds(0)), std::make_pair(std::error_code(), true));
  EXPECT_EQ(raw({"HGET", key, "mode"}).str, "write");
  EXPECT_FALSE(blocking.try_lock_shared());
  EXPECT_FALSE(release(writer.exclusive()));
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

TEST_F(AsyncSharedMutexTest, AnAsyncWriterWakesOnAJavaReadersReleaseWithNoThreadWaiting) {
  const std::string key = unique_key();
  ASSERT_TRUE(raw(redisson_read_lock_command(key, kAsyncJavaReader)).is_nil());
  AsyncSharedMutex writer(client_, key, message_only());
  std::optional<std::pair<std::error_code, bool>> outcome;
  writer.exclusive().async_try_lock_for(seconds(50), [&](std::error_code error, bool acquired) {
    outcome.emplace(error, acquired);
  });
  ASSERT_TRUE(runner_.run_until([&] {
    const Reply counted = raw({"PUBSUB", "NUMSUB", redisson_rwlock_channel(key)});
    return counted.elements.size() == 2 && counted.elements[1].integer == 1;
  }));
  EXPECT_FALSE(outcome.has_value());
  EXPECT_EQ(raw(redisson_read_unlock_command(key, kAsyncJavaReader)).integer, 1);
  ASSERT_TRUE(runner_.run_until([&] { return outcome.has_value(); })) << "the Java release did not wake it";
  EXPECT_EQ(*outcome, std::make_pair(std::error_code(), true));
  EXPECT_TRUE(writer.exclusive().owns_lock());
  EXPECT_FALSE(release(writer.exclusive()));
}

TEST_F(AsyncSharedMutexTest, AReaderCannotUpgradeAndAWriterMayDowngrade) {
  const std::string key = unique_key();
  AsyncSharedMutex holder(client_, key, message_only());
  ASSERT_EQ(acquire(holder.exclusive(), std::chrono::milliseconds(0)), std::make_pair(std::error_code(), true));
  ASSERT_EQ(acquire(holder.shared(), std::chrono::milliseconds(0)), std::make_pair(std::error_code(), true));
  EXPECT_FALSE(release(holder.exclusive()));
  EXPECT_EQ(raw({"HGET", key, "mode"}).str, "read") << "the downgrade did not keep the read";
  EXPECT_EQ(acquire(holder.exclusive(), seconds(30)).first, make_error_code(Errc::bad_option));
  EXPECT_FALSE(release(holder.shared()));
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
  EXPECT_THROW(AsyncSharedMutex(client_, key, token_options()), Error);
}

}  // namespace
}  // namespace lockbridge::testing
