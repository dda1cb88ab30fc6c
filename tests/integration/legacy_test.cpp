// The legacy strategy against a real Redis: jedis-lock 1.0.0's takeover rules, the faithful
// preset's fidelity (no TTL, plain DEL), and what the hardened preset adds without changing bytes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <barrier>
#include <regex>

#include "redis_test_support.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::milliseconds;

// N contenders, each with its own Client (connection) and Mutex, call try_lock() at the same moment.
int count_winners_of_race(const std::string& key, const MutexOptions& options, int contenders) {
  std::vector<Mutex> mutexes;
  for (int i = 0; i < contenders; ++i) mutexes.emplace_back(test_client(), key, options);
  std::barrier start(contenders);
  std::atomic<int> winners{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < contenders; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      if (mutexes[static_cast<std::size_t>(i)].try_lock()) ++winners;
    });
  }
  for (auto& thread : threads) thread.join();
  return winners;
}

class LegacyPresets : public ::testing::TestWithParam<LegacyPreset> {
 protected:
  MutexOptions options(LegacyFormat format = LegacyFormat::epoch_ms) const {
    return GetParam() == LegacyPreset::faithful ? faithful_options(format) : hardened_options(format);
  }
};

TEST_P(LegacyPresets, ExactlyOneOfManyRacersTakesOverAnExpiredKey) {
  for (int round = 0; round < 20; ++round) {
    const std::string key = unique_key(std::to_string(round));
    // A dead holder's stamp, one minute in the past by both clocks.
    raw({"SET", key, std::to_string(wall_ms() - 60000)});
    EXPECT_EQ(count_winners_of_race(key, options(), 8), 1) << "round " << round;
  }
}

TEST_P(LegacyPresets, ExactlyOneOfManyRacersGetsAFreeKey) {
  for (int round = 0; round < 20; ++round) {
    EXPECT_EQ(count_winners_of_race(unique_key(std::to_string(round)), options(), 8), 1) << "round " << round;
  }
}

TEST_P(LegacyPresets, NeverTakesALiveKey) {
  for (const LegacyFormat format : {LegacyFormat::epoch_ms, LegacyFormat::epoch_seconds, LegacyFormat::uuid_ms}) {
    SCOPED_TRACE(std::string(to_string(format)));
    const std::string key = unique_key();
    const std::string live = format_legacy_value(format, wall_ms() + 600000, "0b6f0a2c-3c4d-4e5f-8a9b-0c1d2e3f4a5b");
    raw({"SET", key, live});
    Mutex mutex(test_client(), key, options(format));
    EXPECT_FALSE(mutex.try_lock());
    EXPECT_FALSE(mutex.try_lock_for(milliseconds(30)));
    EXPECT_EQ(raw({"GET", key}).str, live);
  }
}

TEST_P(LegacyPresets, TakesOverAnExpiredStampInEveryFormat) {
  for (const LegacyFormat format : {LegacyFormat::epoch_ms, LegacyFormat::epoch_seconds, LegacyFormat::uuid_ms}) {
    SCOPED_TRACE(std::string(to_string(format)));
    const std::string key = unique_key();
    raw({"SET", key, format_legacy_value(format, wall_ms() - 60000, "0b6f0a2c-3c4d-4e5f-8a9b-0c1d2e3f4a5b")});
    Mutex mutex(test_client(), key, options(format));
    ASSERT_TRUE(mutex.try_lock());
    EXPECT_EQ(raw({"GET", key}).str, mutex.value());
    mutex.unlock();
  }
}

TEST_P(LegacyPresets, NeverTakesTheForeverSentinel) {
  const std::string key = unique_key();
  raw({"SET", key, std::to_string(kLegacyForeverSeconds)});
  Mutex mutex(test_client(), key, options(LegacyFormat::epoch_seconds));
  EXPECT_FALSE(mutex.try_lock_for(milliseconds(30)));
  EXPECT_EQ(raw({"GET", key}).str, "2147483649");
}

TEST_P(LegacyPresets, WritesTheJedisLockValueInEachFormat) {
  const std::int64_t lease = options().lease.count();
  struct Case {
    LegacyFormat format;
    std::string pattern;
  };
  for (const auto& [format, pattern] :
       {Case{LegacyFormat::epoch_ms, "^[0-9]{13}$"}, Case{LegacyFormat::epoch_seconds, "^[0-9]{10}$"},
        Case{LegacyFormat::uuid_ms,
             "^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-"
             "[0-9a-f]{12}:[0-9]{13}$"}}) {
    SCOPED_TRACE(std::string(to_string(format)));
    const std::string key = unique_key();
    Mutex mutex(test_client(), key, options(format));
    const std::int64_t before = wall_ms();
    ASSERT_TRUE(mutex.try_lock());
    const std::int64_t after = wall_ms();
    const std::string value = raw({"GET", key}).str;
    EXPECT_EQ(value, mutex.value());
    EXPECT_TRUE(std::regex_match(value, std::regex(pattern))) << value;
    const auto stamp = parse_legacy_value(value, format);
    ASSERT_TRUE(stamp.has_value());
    // now + lease + 1, by whichever clock stamped it (this machine's or the server's, which is the
    // same machine here); seconds are rounded up.
    const std::int64_t slack = format == LegacyFormat::epoch_seconds ? 1000 : 0;
    EXPECT_GE(stamp->expiry_ms, before + lease + 1);
    EXPECT_LE(stamp->expiry_ms, after + lease + 1 + slack);
    mutex.unlock();
  }
}

TEST_P(LegacyPresets, UnparsableValueIsAnErrorAndTheKeyIsLeftAlone) {
  for (const std::string garbage : {"not-a-timestamp", "", "12abc", "1e12", "99999999999999999999999"}) {
    SCOPED_TRACE(garbage);
    const std::string key = unique_key();
    raw({"SET", key, garbage});
    Mutex mutex(test_client(), key, options());
    const Error error = expect_error([&] { (void)mutex.try_lock(); });
    EXPECT_EQ(error.errc(), Errc::bad_value);
    EXPECT_THAT(error.what(), ::testing::HasSubstr("left unchanged"));
    EXPECT_EQ(raw({"GET", key}).str, garbage);
    EXPECT_EQ(raw({"PTTL", key}).integer, -1);
  }
}

TEST_P(LegacyPresets, AKeyHoldingAHashIsAWrongTypeErrorAndIsLeftAlone) {
  const std::string key = unique_key();
  raw({"HSET", key, "8b0c2a1e-0000-4000-8000-000000000000:57", "1"});
  Mutex mutex(test_client(), key, options());
  EXPECT_EQ(expect_error([&] { (void)mutex.try_lock(); }).errc(), Errc::wrong_type);
  EXPECT_EQ(raw({"TYPE", key}).str, "hash");
  EXPECT_EQ(raw({"HGET", key, "8b0c2a1e-0000-4000-8000-000000000000:57"}).str, "1");
}

INSTANTIATE_TEST_SUITE_P(Legacy, LegacyPresets, ::testing::Values(LegacyPreset::faithful, LegacyPreset::hardened),
                         [](const ::testing::TestParamInfo<LegacyPreset>& param_info) {
                           return param_info.param == LegacyPreset::faithful ? "Faithful" : "Hardened";
                         });

// ---- faithful: the peers' behaviour, flaws included ---------------------------------------------

TEST(LegacyFaithful, SetsNoRedisTtl) {
  const std::string key = unique_key();
  Mutex mutex(test_client(), key, faithful_options());
  ASSERT_TRUE(mutex.try_lock());
  EXPECT_EQ(raw({"PTTL", key}).integer, -1);
  mutex.unlock();
}

TEST(LegacyFaithful, TakeoverDropsTheTtlAsGetsetDoes) {
  const std::string key = unique_key();
  raw({"SET", key, std::to_string(wall_ms() - 1000), "PX", "600000"});
  Mutex mutex(test_client(), key, faithful_options());
  ASSERT_TRUE(mutex.try_lock());
  EXPECT_EQ(raw({"PTTL", key}).integer, -1);
  mutex.unlock();
}

TEST(LegacyFaithful, ReleaseDeletesWhateverIsThereLikeJedisLock) {
  // Known flaw kept on purpose (docs/design.md): after our lease ended and someone else took over,
  // jedis-lock's release still DELs the new holder's lock.
  const std::string key = unique_key();
  auto [stalled, next] = take_over_after_lease_end(key, faithful_options());
  stalled.unlock();
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

TEST(LegacyFaithful, ExtendIsRefusedBecauseJedisLockHasNone) {
  const std::string key = unique_key();
  Mutex mutex(test_client(), key, faithful_options());
  ASSERT_TRUE(mutex.try_lock());
  EXPECT_EQ(expect_error([&] { (void)mutex.extend(milliseconds(1000)); }).errc(), Errc::bad_option);
  EXPECT_TRUE(mutex.owns_lock());
  mutex.unlock();
}

TEST(LegacyFaithful, ReadsASecondsStampAsMillisecondsAndStealsItLikeItsPeers) {
  // Unit mix-up between a seconds peer and a milliseconds peer (docs/wire-formats.md hazard 5): the
  // faithful preset does what jedis-lock 1.0.0 does, which is to take over at once.
  const std::string key = unique_key();
  raw({"SET", key, format_legacy_value(LegacyFormat::epoch_seconds, wall_ms() + 600000)});
  Mutex mutex(test_client(), key, faithful_options());
  EXPECT_TRUE(mutex.try_lock());
  mutex.unlock();
}

// ---- hardened: same bytes, fixed flaws ----------------------------------------------------------

TEST(LegacyHardened, SetsASafetyTtlOfLeasePlusGrace) {
  const std::string key = unique_key();
  MutexOptions options = hardened_options();
  Mutex mutex(test_client(), key, options);
  ASSERT_TRUE(mutex.try_lock());
  const std::int64_t pttl = raw({"PTTL", key}).integer;
  EXPECT_GT(pttl, options.lease.count());
  EXPECT_LE(pttl, (options.lease + options.legacy.safety_ttl_grace).count());
  mutex.unlock();
}

TEST(LegacyHardened, ReleaseNeverDeletesAnotherOwnersValue) {
  const std::string key = unique_key();
  auto [stalled, next] = take_over_after_lease_end(key, hardened_options());  // once the stamp expires
  stalled.unlock();
  EXPECT_EQ(stalled.last_error(), Errc::lease_lost);
  EXPECT_EQ(raw({"GET", key}).str, next.value());
  next.unlock();
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

TEST(LegacyHardened, ReleaseLeavesAJavaPeersTakeoverInPlace) {
  const std::string key = unique_key();
  Mutex mutex(test_client(), key, hardened_options());
  ASSERT_TRUE(mutex.try_lock());
  // What a jedis-lock peer's takeover leaves (its own lease; not the same millisecond stamp as ours).
  const std::string java_value = std::to_string(wall_ms() + 123457);
  raw({"GETSET", key, java_value});
  mutex.unlock();
  EXPECT_EQ(mutex.last_error(), Errc::lease_lost);
  EXPECT_EQ(raw({"GET", key}).str, java_value);
}

TEST(LegacyHardened, WaitsOnATokenLockUntilItIsReleasedAndNeverTouchesIt) {
  // Mid-migration a token client holds the key: hardened reads a value no stamp format reads, but
  // with a TTL, and treats it as held (the faithful preset, like jedis-lock, fails on it instead).
  const std::string key = unique_key();
  Mutex token(test_client(), key, token_options());
  ASSERT_TRUE(token.try_lock());
  const std::string token_value = raw({"GET", key}).str;
  MutexOptions options = hardened_options();
  options.local_queue = false;
  Mutex hardened(test_client(), key, options);
  EXPECT_FALSE(hardened.try_lock());
  EXPECT_FALSE(hardened.try_lock_for(std::chrono::milliseconds(30)));
  EXPECT_EQ(raw({"GET", key}).str, token_value);
  EXPECT_EQ(expect_error([&] { (void)Mutex(test_client(), key, faithful_options()).try_lock(); }).errc(),
            Errc::bad_value);
  token.unlock();
  EXPECT_TRUE(hardened.try_lock());
  hardened.unlock();
}

TEST(LegacyHardened, RefusesToJudgeAStampInTheWrongUnit) {
  // A live seconds stamp read as milliseconds looks expired since 1970: never steal it.
  const std::string key = unique_key();
  const std::string seconds_value = format_legacy_value(LegacyFormat::epoch_seconds, wall_ms() + 600000);
  raw({"SET", key, seconds_value});
  Mutex mutex(test_client(), key, hardened_options());
  EXPECT_EQ(expect_error([&] { (void)mutex.try_lock(); }).errc(), Errc::bad_value);
  EXPECT_EQ(raw({"GET", key}).str, seconds_value);
}

TEST(LegacyHardened, ExtendWritesALaterStampThatPeersRead) {
  const std::string key = unique_key();
  MutexOptions options = hardened_options();
  options.lease = milliseconds(5000);
  Mutex mutex(test_client(), key, options);
  ASSERT_TRUE(mutex.try_lock());
  const auto before = parse_legacy_value(raw({"GET", key}).str, LegacyFormat::epoch_ms);
  ASSERT_TRUE(mutex.extend(milliseconds(600000)));
  const std::string value = raw({"GET", key}).str;
  EXPECT_EQ(value, mutex.value());
  const auto after = parse_legacy_value(value, LegacyFormat::epoch_ms);
  ASSERT_TRUE(before && after);
  EXPECT_GT(after->expiry_ms, before->expiry_ms + 500000);
  EXPECT_GT(raw({"PTTL", key}).integer, 500000);
  mutex.unlock();
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

TEST(LegacyHardened, ExtendOfATakenOverLockFailsAndChangesNothing) {
  const std::string key = unique_key();
  Mutex mutex(test_client(), key, hardened_options());
  ASSERT_TRUE(mutex.try_lock());
  const std::string other = std::to_string(wall_ms() + 123457);
  raw({"SET", key, other});
  EXPECT_FALSE(mutex.extend(milliseconds(60000)));
  EXPECT_EQ(mutex.last_error(), Errc::lease_lost);
  EXPECT_FALSE(mutex.owns_lock());
  EXPECT_EQ(raw({"GET", key}).str, other);
}

}  // namespace
}  // namespace lockbridge::testing
