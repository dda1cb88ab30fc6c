// What a key in Redis is, as far as locks go: the class of lock it holds (or `other`) and what is
// wrong with it. Pure functions over what one read of the key returned (audit.cpp reads a batch
// of keys in one script call); the formats are those of docs/design.md §4.1 (the peers' values)
// and docs/compat.md. docs/audit.md gives every rule.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lockbridge/name_table.hpp"

namespace lockbridge::tools::audit {

enum class LockClass {
  legacy_ms,          // jedis-lock 1.0.0: epoch ms expiry
  legacy_seconds,     // redis-py <= 2.9, the Redis SETNX doc: epoch seconds expiry
  legacy_uuid_ms,     // jedis-lock master: <uuid>:<epoch ms>
  legacy_forever,     // redis-py's 2^31+1 seconds: held until deleted
  token,              // an opaque random string with a TTL (lockbridge token, SET NX PX locks)
  redisson,           // a hash of <uuid>:<thread id> -> reentrant count
  redisson_rwlock,    // RReadWriteLock: such a hash with a 'mode' field, or a reader's rwlock_timeout key
  redisson_fair_queue,  // RFairLock's redisson_lock_queue:{K} list and redisson_lock_timeout:{K} zset
  redisson_semaphore,   // RSemaphore's permits (with --type-hint semaphore), RPermitExpirableSemaphore's {K}:timeout
  redisson_latch,       // RCountDownLatch's count (with --type-hint latch)
  python_redis_lock,  // lock:<name> (24 base64 chars) and its lock-signal:<name> list
  other,              // not a lock: counted, never touched
};
enum class Flag : unsigned {
  stale = 1,        // a timestamp lock whose expiry has passed (by Redis TIME): legacy peers take it over
  no_ttl = 2,       // a lock with neither a Redis TTL nor an expiry in its value: it never frees itself
  far_future = 4,   // an expiry further ahead than any sane lease: clock skew or a unit mix-up
  bad_value = 8,    // a value that is not a valid lock of its class
  wrong_type = 16,  // a key of another Redis type than its class (or the type hint) needs
};

// Each class and flag with its name (JSON, --fail-on), in the order reports list them.
inline constexpr NameTable<LockClass, 12> kLockClassNames{
    std::array<std::pair<LockClass, std::string_view>, 12>{{{LockClass::legacy_ms, "legacy_ms"},
                                                           {LockClass::legacy_seconds, "legacy_seconds"},
                                                           {LockClass::legacy_uuid_ms, "legacy_uuid_ms"},
                                                           {LockClass::legacy_forever, "legacy_forever"},
                                                           {LockClass::token, "token"},
                                                           {LockClass::redisson, "redisson"},
                                                           {LockClass::redisson_rwlock, "redisson_rwlock"},
                                                           {LockClass::redisson_fair_queue, "redisson_fair_queue"},
                                                           {LockClass::redisson_semaphore, "redisson_semaphore"},
                                                           {LockClass::redisson_latch, "redisson_latch"},
                                                           {LockClass::python_redis_lock, "python_redis_lock"},
                                                           {LockClass::other, "other"}}}};
inline constexpr NameTable<Flag, 5> kFlagNames{
    std::array<std::pair<Flag, std::string_view>, 5>{{{Flag::stale, "stale"},
                                                      {Flag::no_ttl, "no_ttl"},
                                                      {Flag::far_future, "far_future"},
                                                      {Flag::bad_value, "bad_value"},
                                                      {Flag::wrong_type, "wrong_type"}}}};

constexpr std::string_view to_string(LockClass value) noexcept { return kLockClassNames.name(value, "other"); }
constexpr std::string_view to_string(Flag flag) noexcept { return kFlagNames.name(flag); }
// Its name, or the same with '-' for '_' ("no-ttl", as --fail-on takes it).
std::optional<Flag> flag_from_string(std::string_view name) noexcept;

// Redisson's objects other than RLock, which convert never touches (as RLock).
constexpr bool is_redisson_family(LockClass value) noexcept {
  return value == LockClass::redisson || value == LockClass::redisson_rwlock ||
         value == LockClass::redisson_fair_queue || value == LockClass::redisson_semaphore ||
         value == LockClass::redisson_latch;
}

// --type-hint: the keys matched are locks of this kind, so a value that does not parse is
// bad_value (not `other`) and a key of another type is wrong_type. A semaphore's permits and a
// latch's count are plain integers, which only a hint tells from any counter.
enum class TypeHint { none, legacy_ms, legacy_seconds, legacy_uuid_ms, token, redisson, semaphore, latch };
inline constexpr NameTable<TypeHint, 8> kTypeHintNames{
    std::array<std::pair<TypeHint, std::string_view>, 8>{{{TypeHint::none, "none"},
                                                          {TypeHint::legacy_ms, "legacy-ms"},
                                                          {TypeHint::legacy_seconds, "legacy-seconds"},
                                                          {TypeHint::legacy_uuid_ms, "legacy-uuid-ms"},
                                                          {TypeHint::token, "token"},
                                                          {TypeHint::redisson, "redisson"},
                                                          {TypeHint::semaphore, "semaphore"},
                                                          {TypeHint::latch, "latch"}}}};

// One key as read: its Redis type ("string", "hash", "list", ..., "none" if it vanished), PTTL
// (-1 no TTL, -2 gone), for strings the value (at most kValueSample bytes; `truncated` when
// longer), for hashes up to kHashSample field/value pairs.
struct KeySample {
  static constexpr std::size_t kValueSample = 256;
  static constexpr std::size_t kHashSample = 4;
  std::string key;
  std::string type;
  std::int64_t pttl_ms = -2;
  std::int64_t expire_at_ms = -2;  // PEXPIRETIME (epoch ms; -1 no TTL), read only when asked for (convert)
  std::string value;
  bool truncated = false;
  // A hash's sampled fields and values. Never empty for a hash that exists, so empty here means
  // they could not be sampled (read_keys in scanner.hpp): nothing is known of its values.
  std::vector<std::pair<std::string, std::string>> fields;
  // A hash's 'mode' field (Redisson's read/write lock: "read" or "write"), when it has one.
  std::optional<std::string> mode;
  // A list's or sorted set's length (a fair lock's queue), read for those alone; -1 otherwise.
  std::int64_t size = -1;
};

struct Classification {
  LockClass lock_class = LockClass::other;
  unsigned flags = 0;                     // Flag bits
  std::optional<std::int64_t> expiry_ms;  // timestamp locks: the expiry in the value (epoch ms)
  bool has(Flag flag) const noexcept { return (flags & static_cast<unsigned>(flag)) != 0; }
};

struct ClassifyOptions {
  TypeHint hint = TypeHint::none;
  std::chrono::milliseconds far_future{7LL * 24 * 3600 * 1000};  // beyond this ahead: far_future
};

// `server_now_ms` is Redis TIME, read with the batch.
Classification classify(const KeySample& sample, std::int64_t server_now_ms, const ClassifyOptions& options);

}  // namespace lockbridge::tools::audit
