// A keyspace with one key of every lock class and flag audit knows (docs/audit.md), binary names,
// wrong types and garbage values included: audit counts it, convert rewrites it.
#pragma once

#include <string>
#include <vector>

#include "redis_test_support.hpp"

namespace lockbridge::testing {

inline constexpr char kUuid[] = "f47ac10b-58cc-4372-a567-0e02b2c3d479";

// Every key of the keyspace holds `tag`, so MATCH *tag* finds exactly these.
struct MixedKeyspace {
  std::string tag = unique_key("audit");
  std::vector<std::string> keys;

  std::string key(const std::string& name) {
    keys.push_back(name + ":" + tag);
    return keys.back();
  }

  MixedKeyspace() {
    const std::int64_t now = server_ms();
    raw({"SET", key("ms-live"), std::to_string(now + 60000)});
    raw({"SET", key("ms-stale"), std::to_string(now - 60000)});
    raw({"SET", key("ms-stale-too"), std::to_string(now - 5000)});
    raw({"SET", key("ms-far"), std::to_string(now + 30LL * 24 * 3600 * 1000)});
    raw({"SET", key("seconds"), std::to_string(now / 1000 + 60)});
    raw({"SET", key("uuid"), std::string(kUuid) + ":" + std::to_string(now + 60000)});
    raw({"SET", key("uuid-garbage"), std::string(kUuid) + ":later"});
    raw({"SET", key("forever"), "2147483649"});
    raw({"SET", key("token"), "0123456789abcdef0123456789abcdef", "PX", "60000"});
    raw({"SET", key("token-no-ttl"), "0123456789abcdef0123456789abcdef"});
    raw({"HSET", key("redisson"), std::string(kUuid) + ":57", "1"});
    raw({"PEXPIRE", keys.back(), "30000"});
    // python-redis-lock: lock:<name> and lock-signal:<name>.
    raw({"SET", key("lock:python"), "AbCdEfGhIjKlMnOpQrStUvWx"});
    raw({"RPUSH", key("lock-signal:python"), "1"});
    raw({"SET", key("counter"), "42"});
    raw({"SADD", key("a-set"), "member"});
    // Binary names: a newline, a space, invalid UTF-8.
    raw({"SET", key("bin\nary \xff\xfe"), std::to_string(now + 60000)});
  }
  ~MixedKeyspace() {
    for (const std::string& name : keys) raw({"DEL", name});
  }
};

}  // namespace lockbridge::testing
