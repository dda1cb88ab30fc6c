// The faithful legacy preset, recorded on the server with MONITOR, must send exactly jedis-lock
// 1.0.0's commands. The golden transcripts live in compat/golden/jedis-lock-1.0.0/.
#include <gtest/gtest.h>

#include "golden_transcript.hpp"
#include "redis_test_support.hpp"

namespace lockbridge::testing {
namespace {

// {key} is the lock key; {stamp} a jedis-lock value for a lease taken between `before` and `after`
// (both read from the wall clock around the operation).
void expect_matches(const Transcript& golden, const Transcript& recorded, const std::string& key, std::int64_t before,
                    std::int64_t after, std::int64_t lease) {
  testing::expect_matches(golden, recorded,
                          {{"{key}", exactly(key)}, {"{stamp}", stamp_between(before, after, lease)}});
}

Transcript load_golden(const std::string& name) { return testing::load_golden("jedis-lock-1.0.0", name); }

class FaithfulWire : public ::testing::Test {
 protected:
  const std::string key_ = unique_key();
  const MutexOptions options_ = faithful_options();
  Mutex mutex_{test_client(), key_, options_};
  CommandRecorder recorder_{key_};
};

TEST_F(FaithfulWire, AcquiringAFreeKeyIsOneSetnx) {
  recorder_.start();
  const std::int64_t before = wall_ms();
  ASSERT_TRUE(mutex_.try_lock());
  const std::int64_t after = wall_ms();
  expect_matches(load_golden("acquire_free.txt"), recorder_.stop(), key_, before, after, options_.lease.count());
}

TEST_F(FaithfulWire, AttemptOnALiveKeyIsSetnxThenGet) {
  raw({"SET", key_, std::to_string(wall_ms() + 600000)});
  recorder_.start();
  const std::int64_t before = wall_ms();
  ASSERT_FALSE(mutex_.try_lock());
  const std::int64_t after = wall_ms();
  expect_matches(load_golden("acquire_held.txt"), recorder_.stop(), key_, before, after, options_.lease.count());
}

TEST_F(FaithfulWire, TakingOverAnExpiredKeyIsSetnxGetGetset) {
  raw({"SET", key_, std::to_string(wall_ms() - 1000)});
  recorder_.start();
  const std::int64_t before = wall_ms();
  ASSERT_TRUE(mutex_.try_lock());
  const std::int64_t after = wall_ms();
  expect_matches(load_golden("acquire_expired.txt"), recorder_.stop(), key_, before, after, options_.lease.count());
}

TEST_F(FaithfulWire, ReleaseIsAPlainDel) {
  ASSERT_TRUE(mutex_.try_lock());
  recorder_.start();
  mutex_.unlock();
  expect_matches(load_golden("release.txt"), recorder_.stop(), key_, 0, 0, 0);
}

}  // namespace
}  // namespace lockbridge::testing
