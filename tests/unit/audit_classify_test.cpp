// audit's classifier and the key escaping every JSON output uses: pure functions, no server.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "audit/classify.hpp"
#include "key_text.hpp"

namespace lockbridge::tools {
namespace {

using audit::Classification;
using audit::ClassifyOptions;
using audit::Flag;
using audit::KeySample;
using audit::LockClass;

constexpr std::int64_t kNow = 1'800'000'000'000;  // Redis TIME of the batch, epoch ms
constexpr char kUuid[] = "f47ac10b-58cc-4372-a567-0e02b2c3d479";

KeySample string_key(std::string key, std::string value, std::int64_t pttl = -1) {
  KeySample sample;
  sample.key = std::move(key);
  sample.type = "string";
  sample.value = std::move(value);
  sample.pttl_ms = pttl;
  return sample;
}

Classification of(const KeySample& sample, ClassifyOptions options = {}) {
  return audit::classify(sample, kNow, options);
}

TEST(AuditClassify, TimestampLocksByFormatWithStaleAndFarFuture) {
  EXPECT_EQ(of(string_key("k", std::to_string(kNow + 60000))).lock_class, LockClass::legacy_ms);
  EXPECT_EQ(of(string_key("k", std::to_string(kNow / 1000 + 60))).lock_class, LockClass::legacy_seconds);
  EXPECT_EQ(of(string_key("k", std::string(kUuid) + ":" + std::to_string(kNow + 1))).lock_class,
            LockClass::legacy_uuid_ms);
  const Classification forever = of(string_key("k", "2147483649"));
  EXPECT_EQ(forever.lock_class, LockClass::legacy_forever);
  EXPECT_TRUE(forever.has(Flag::no_ttl)) << "held until someone deletes it";
  const Classification stale = of(string_key("k", std::to_string(kNow - 1)));
  EXPECT_TRUE(stale.has(Flag::stale));
  EXPECT_EQ(stale.expiry_ms, kNow - 1);
  EXPECT_FALSE(of(string_key("k", std::to_string(kNow))).has(Flag::stale))
      << "jedis-lock: expired only when before now";
  EXPECT_TRUE(of(string_key("k", std::to_string(kNow + 8LL * 24 * 3600 * 1000))).has(Flag::far_future));
  EXPECT_FALSE(of(string_key("k", std::to_string(kNow + 6LL * 24 * 3600 * 1000))).has(Flag::far_future));
}

TEST(AuditClassify, TheLargestFarFutureMarginFlagsNothingInsteadOfOverflowing) {
  ClassifyOptions options;
  options.far_future = std::chrono::milliseconds::max();
  EXPECT_FALSE(of(string_key("k", std::to_string(kNow + 60000)), options).has(Flag::far_future));
  EXPECT_FALSE(
      audit::classify(string_key("k", std::to_string(kNow + 60000)), INT64_MAX, options).has(Flag::far_future));
}

TEST(AuditClassify, TokensPythonLocksAndRedisson) {
  const Classification token = of(string_key("k", "0123456789abcdef0123456789abcdef", 5000));
  EXPECT_EQ(token.lock_class, LockClass::token);
  EXPECT_EQ(token.flags, 0U);
  EXPECT_TRUE(of(string_key("k", "0123456789abcdef0123456789abcdef")).has(Flag::no_ttl));
  EXPECT_EQ(of(string_key("lock:job", "AbCdEfGhIjKlMnOpQrStUvWx", 1000)).lock_class, LockClass::python_redis_lock);
  KeySample signal;
  signal.key = "lock-signal:job";
  signal.type = "list";
  EXPECT_EQ(of(signal).lock_class, LockClass::python_redis_lock);
  signal.type = "set";
  EXPECT_TRUE(of(signal).has(Flag::wrong_type));
  KeySample redisson;
  redisson.key = "orders";
  redisson.type = "hash";
  redisson.pttl_ms = 30000;
  redisson.fields = {{std::string(kUuid) + ":57", "2"}};
  EXPECT_EQ(of(redisson).lock_class, LockClass::redisson);
  redisson.fields = {{std::string(kUuid) + ":57", "x"}};
  EXPECT_TRUE(of(redisson).has(Flag::bad_value));
  redisson.fields = {{"name", "value"}};
  EXPECT_EQ(of(redisson).lock_class, LockClass::other);
}

TEST(AuditClassify, WhatIsNotALockIsOther) {
  EXPECT_EQ(of(string_key("k", "42")).lock_class, LockClass::other) << "a counter";
  EXPECT_EQ(of(string_key("k", "{\"cached\": true}")).lock_class, LockClass::other);
  EXPECT_EQ(of(string_key("k", "")).lock_class, LockClass::other);
  KeySample gone;
  gone.type = "none";
  EXPECT_EQ(of(gone).lock_class, LockClass::other);
  KeySample list;
  list.key = "queue";
  list.type = "list";
  EXPECT_EQ(of(list).lock_class, LockClass::other);
  KeySample truncated = string_key("k", std::string(256, '7'));
  truncated.truncated = true;
  EXPECT_EQ(of(truncated).lock_class, LockClass::other);
  const Classification broken = of(string_key("k", std::string(kUuid) + ":soon"));
  EXPECT_EQ(broken.lock_class, LockClass::legacy_uuid_ms);
  EXPECT_TRUE(broken.has(Flag::bad_value));
}

TEST(AuditClassify, ATypeHintTurnsWhatDoesNotParseIntoBadValueAndOtherTypesIntoWrongType) {
  ClassifyOptions legacy_ms;
  legacy_ms.hint = audit::TypeHint::legacy_ms;
  const Classification garbage = of(string_key("k", "not a stamp"), legacy_ms);
  EXPECT_EQ(garbage.lock_class, LockClass::legacy_ms);
  EXPECT_TRUE(garbage.has(Flag::bad_value));
  EXPECT_TRUE(of(string_key("k", std::to_string(kNow / 1000)), legacy_ms).has(Flag::bad_value)) << "seconds, not ms";
  KeySample hash;
  hash.type = "hash";
  EXPECT_TRUE(of(hash, legacy_ms).has(Flag::wrong_type));
  EXPECT_EQ(of(string_key("k", std::to_string(kNow + 5)), legacy_ms).flags, 0U);
}

// A hash whose fields could not be sampled (it changed type before HRANDFIELD, or the server has
// none: Redis < 6.2) has no fields: told it is a Redisson lock, audit takes the hint and flags no
// values it did not read.
TEST(AuditClassify, ARedissonHintOnAHashWithoutSampledFieldsFlagsNoBadValue) {
  ClassifyOptions redisson;
  redisson.hint = audit::TypeHint::redisson;
  KeySample hash;
  hash.key = "orders";
  hash.type = "hash";
  hash.pttl_ms = 30000;
  const Classification unsampled = of(hash, redisson);
  EXPECT_EQ(unsampled.lock_class, LockClass::redisson);
  EXPECT_EQ(unsampled.flags, 0U);
  hash.pttl_ms = -1;
  EXPECT_TRUE(of(hash, redisson).has(Flag::no_ttl));
  hash.fields = {{"name", "value"}};
  EXPECT_TRUE(of(hash, redisson).has(Flag::bad_value)) << "fields that were read and are not Redisson's";
}

TEST(AuditClassify, RedissonsOtherObjectsByTheirLayoutAndNames) {
  const std::string reader = std::string(kUuid) + ":7";
  KeySample rw;
  rw.key = "config";
  rw.type = "hash";
  rw.pttl_ms = 30000;
  rw.mode = "read";
  rw.fields = {{"mode", "read"}, {reader, "1"}};
  EXPECT_EQ(of(rw).lock_class, LockClass::redisson_rwlock);
  EXPECT_EQ(of(rw).flags, 0U);
  // The 'mode' field not among the sampled ones: a writer's field says it all the same.
  rw.mode.reset();
  rw.fields = {{reader + ":write", "1"}};
  EXPECT_EQ(of(rw).lock_class, LockClass::redisson_rwlock);
  rw.mode = "upgrade";
  EXPECT_TRUE(of(rw).has(Flag::bad_value)) << "a writer's field with a mode Redisson never writes";
  // A settings hash with a 'mode' field is no lock.
  KeySample settings;
  settings.key = "user:42";
  settings.type = "hash";
  settings.pttl_ms = -1;
  settings.mode = "dark";
  settings.fields = {{"mode", "dark"}, {"name", "bob"}};
  EXPECT_EQ(of(settings).lock_class, LockClass::other);
  settings.mode = "read";
  settings.fields = {{"mode", "read"}, {"name", "bob"}};
  EXPECT_EQ(of(settings).lock_class, LockClass::other) << "a 'read' mode beside fields no Redisson owner has";
  // Under --type-hint redisson a read/write lock is Redisson's, not a bad RLock.
  ClassifyOptions redisson_hint;
  redisson_hint.hint = audit::TypeHint::redisson;
  rw.mode = "read";
  rw.fields = {{"mode", "read"}, {reader, "1"}};
  EXPECT_EQ(audit::classify(rw, kNow, redisson_hint).lock_class, LockClass::redisson_rwlock);
  EXPECT_EQ(audit::classify(rw, kNow, redisson_hint).flags, 0U);

  EXPECT_EQ(of(string_key("{config}:" + reader + ":rwlock_timeout:1", "1", 30000)).lock_class,
            LockClass::redisson_rwlock);
  EXPECT_TRUE(of(string_key("{config}:" + reader + ":rwlock_timeout:1", "1")).has(Flag::no_ttl));

  KeySample queue;
  queue.key = "redisson_lock_queue:{orders}";
  queue.type = "list";
  queue.size = 2;
  EXPECT_EQ(of(queue).lock_class, LockClass::redisson_fair_queue);
  queue.key = "redisson_lock_timeout:{orders}";
  EXPECT_TRUE(of(queue).has(Flag::wrong_type)) << "the deadlines are a sorted set";
  queue.type = "zset";
  EXPECT_EQ(of(queue).flags, 0U);

  KeySample leases;
  leases.key = "{workers}:timeout";
  leases.type = "zset";
  EXPECT_EQ(of(leases).lock_class, LockClass::redisson_semaphore);

  // A semaphore's permits and a latch's count are integers: only a hint names them.
  EXPECT_EQ(of(string_key("uploads", "4")).lock_class, LockClass::other);
  ClassifyOptions semaphore;
  semaphore.hint = audit::TypeHint::semaphore;
  EXPECT_EQ(audit::classify(string_key("uploads", "4"), kNow, semaphore).lock_class, LockClass::redisson_semaphore);
  EXPECT_EQ(audit::classify(string_key("uploads", "-1"), kNow, semaphore).flags, 0U);
  EXPECT_TRUE(audit::classify(string_key("uploads", "four"), kNow, semaphore).has(Flag::bad_value));
  ClassifyOptions latch;
  latch.hint = audit::TypeHint::latch;
  KeySample hash_latch = rw;
  EXPECT_TRUE(audit::classify(hash_latch, kNow, latch).has(Flag::wrong_type));
  EXPECT_EQ(audit::classify(string_key("ready", "3"), kNow, latch).lock_class, LockClass::redisson_latch);
}

TEST(AuditClassify, FlagAndHintNames) {
  EXPECT_EQ(audit::flag_from_string("no-ttl"), Flag::no_ttl);
  EXPECT_EQ(audit::flag_from_string("bad_value"), Flag::bad_value);
  EXPECT_FALSE(audit::flag_from_string("stael").has_value());
  EXPECT_EQ(audit::kTypeHintNames.parse("legacy-uuid-ms"), audit::TypeHint::legacy_uuid_ms);
  EXPECT_FALSE(audit::kTypeHintNames.parse("jedis").has_value());
}

TEST(KeyText, Base64RoundTripsEveryByteAndRefusesNonCanonicalText) {
  std::string every_byte;
  for (int i = 0; i < 256; ++i) every_byte.push_back(static_cast<char>(i));
  for (std::size_t length = 0; length < 6; ++length) {
    EXPECT_EQ(base64_decode(base64_encode(every_byte.substr(0, length))), every_byte.substr(0, length));
  }
  EXPECT_EQ(base64_decode(base64_encode(every_byte)), every_byte);
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
  EXPECT_FALSE(base64_decode("Zm9=").has_value()) << "stray bits under the padding";
  EXPECT_FALSE(base64_decode("Zm8").has_value());
  EXPECT_FALSE(base64_decode("Z!8=").has_value());
}

TEST(KeyText, KeysComeOutEscapedAndReadBackExactly) {
  for (const std::string& key : {std::string("orders:42"), std::string("with space\nand newline"),
                                 std::string("caf\xc3\xa9"), std::string("bad\xff\xfe utf8"), std::string("\xc0\x80"),
                                 std::string("nul\0inside", 10), std::string("\xed\xa0\x80")}) {
    nlohmann::ordered_json out;
    put_key(out, key);
    const nlohmann::json parsed = nlohmann::json::parse(out.dump());  // throws on invalid UTF-8
    EXPECT_EQ(read_key(parsed), key);
    EXPECT_EQ(parsed.contains("key_base64"), !is_valid_utf8(key)) << out.dump();
  }
  nlohmann::ordered_json out;
  put_key(out, "a\xff");
  EXPECT_EQ(out["key"], "a\\xff");
}

}  // namespace
}  // namespace lockbridge::tools
