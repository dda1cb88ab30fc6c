// The redisson strategy on the wire: what each operation sends, recorded with MONITOR and compared
// with compat/golden/redisson/ (Redisson's own scripts and the commands they run).
#include <gtest/gtest.h>

#include "golden_transcript.hpp"
#include "redis_test_support.hpp"
#include "strategies/redisson.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::seconds;

class RedissonWire : public ::testing::Test {
 protected:
  RedissonWire() : mutex_(test_client(), key_, options()) {}
  static MutexOptions options() {
    MutexOptions options = MutexOptions::redisson_lock();
    options.watchdog.enabled = false;  // renewals are recorded through extend(), the same call
    return options;
  }
  void expect(const std::string& name, const std::function<void()>& operation, const std::string& field) {
    expect_wire("redisson", name, key_, operation, [&](auto, auto) {
      return Placeholders{{"{key}", exactly(key_)},
                          {"{field}", field.empty() ? matching("[0-9a-f-]{36}:[0-9]+") : exactly(field)},
                          {"{sha}", kSha},
                          {"{channel}", exactly(detail::RedissonStrategy::channel_name(key_))}};
    });
  }
  const std::string key_ = unique_key();
  Mutex mutex_;
};

TEST_F(RedissonWire, AcquireOnAFreeNameIsRedissonsLockScript) {
  expect(
      "acquire_free.txt", [&] { ASSERT_TRUE(mutex_.try_lock()); }, "");
}

TEST_F(RedissonWire, AnAttemptOnAHeldNameAnswersWithItsPttl) {
  raw({"HSET", key_, "8b0c2a1e-0000-4000-8000-000000000000:57", "1"});
  raw({"PEXPIRE", key_, "30000"});
  expect(
      "acquire_held.txt", [&] { ASSERT_FALSE(mutex_.try_lock()); }, "");
}

TEST_F(RedissonWire, ARenewalIsHexistsThenPexpire) {
  ASSERT_TRUE(mutex_.try_lock());
  expect(
      "renewal.txt", [&] { ASSERT_TRUE(mutex_.extend(seconds(30))); }, mutex_.value());
}

TEST_F(RedissonWire, ReleaseDeletesAndPublishesZero) {
  ASSERT_TRUE(mutex_.try_lock());
  const std::string field = mutex_.value();
  expect(
      "release.txt", [&] { mutex_.unlock(); }, field);
}

}  // namespace
}  // namespace lockbridge::testing
