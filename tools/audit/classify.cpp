#include "classify.hpp"

#include <algorithm>
#include <array>

#include "lockbridge/identity.hpp"
#include "lockbridge/legacy_value.hpp"
#include "saturating.hpp"

namespace lockbridge::tools::audit {

namespace {

void add(Classification& result, Flag flag) { result.flags |= static_cast<unsigned>(flag); }

bool all_of(std::string_view text, bool (*accept)(char)) {
  return !text.empty() && std::all_of(text.begin(), text.end(), accept);
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_token_char(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '+' || c == '/' ||
         c == '=' || c == '-' || c == '_' || c == ':' || c == '.';
}

// python-redis-lock's id: 18 random bytes, base64 (24 characters).
bool is_python_lock_id(std::string_view value) {
  return value.size() == 24 && all_of(value, [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '+' || c == '/' ||
                  c == '=';
         });
}

// What a random token looks like: 16-128 characters of the usual token alphabets, not a number
// (a number is a counter or a timestamp).
bool looks_like_token(std::string_view value) {
  return value.size() >= 16 && value.size() <= 128 && all_of(value, is_token_char) && !all_of(value, is_digit);
}

// Stale and far_future for a timestamp lock.
void judge_expiry(Classification& result, const LegacyStamp& stamp, std::int64_t now_ms,
                  const ClassifyOptions& options) {
  if (stamp.forever) return;
  result.expiry_ms = stamp.expiry_ms;
  if (stamp.expiry_ms < now_ms) add(result, Flag::stale);
  if (stamp.expiry_ms > add_saturating(now_ms, options.far_future.count())) add(result, Flag::far_future);
}

// A string value in a legacy format: the class it is, or nullopt.
std::optional<Classification> as_legacy(std::string_view value, std::int64_t now_ms, const ClassifyOptions& options,
                                        std::optional<LegacyFormat> only) {
  const auto try_format = [&](LegacyFormat format, LockClass lock_class) -> std::optional<Classification> {
    if (only && *only != format) return std::nullopt;
    const auto stamp = parse_legacy_value(value, format);
    if (!stamp || !is_plausible(*stamp, format)) return std::nullopt;
    Classification result;
    result.lock_class = stamp->forever ? LockClass::legacy_forever : lock_class;
    judge_expiry(result, *stamp, now_ms, options);
    return result;
  };
  if (auto uuid = try_format(LegacyFormat::uuid_ms, LockClass::legacy_uuid_ms)) return uuid;
  if (auto ms = try_format(LegacyFormat::epoch_ms, LockClass::legacy_ms)) return ms;
  return try_format(LegacyFormat::epoch_seconds, LockClass::legacy_seconds);
}

Classification classify_string(const KeySample& sample, std::int64_t now_ms, const ClassifyOptions& options) {
  const std::string_view value = sample.value;
  Classification result;
  if (sample.key.starts_with("lock:")) {
    if (is_python_lock_id(value)) {
      result.lock_class = LockClass::python_redis_lock;
      if (sample.pttl_ms == -1) add(result, Flag::no_ttl);  // its default: no TTL
      return result;
    }
  }
  if (!sample.truncated) {
    if (auto legacy = as_legacy(value, now_ms, options, std::nullopt)) {
      result = *legacy;
      // The forever sentinel without a TTL is held until someone deletes it.
      if (result.lock_class == LockClass::legacy_forever && sample.pttl_ms == -1) add(result, Flag::no_ttl);
      return result;
    }
    // The shape of jedis-lock master's value with a number that does not parse: a broken lock.
    if (value.size() > 37 && is_uuid(value.substr(0, 36)) && value[36] == ':') {
      result.lock_class = LockClass::legacy_uuid_ms;
      add(result, Flag::bad_value);
      return result;
    }
    if (looks_like_token(value)) {
      result.lock_class = LockClass::token;
      if (sample.pttl_ms == -1) add(result, Flag::no_ttl);
      return result;
    }
  }
  return result;  // other
}

// Redisson's owner field <uuid>:<thread id>, and its read/write lock's writer field, the same + ":write".
bool is_owner_field(std::string_view name) {
  return name.size() > 37 && is_uuid(name.substr(0, 36)) && name[36] == ':' && all_of(name.substr(37), is_digit);
}
bool is_writer_field(std::string_view name) { return name.ends_with(":write") && is_owner_field(name.substr(0, name.size() - 6)); }

// Redisson: every field <uuid>:<thread id>, every value a positive count. A hash whose 'mode' is
// "read" or "write" (read by HGET, or among the sampled fields), or with a writer's field, and
// whose other sampled fields are all owners' (readers' or the writer's), is its read/write lock.
// Any other hash (a settings hash with a 'mode' field) is not a lock.
Classification classify_hash(const KeySample& sample) {
  Classification result;
  // Plain variables, not an optional<string_view>: GCC 12 warns about the latter wrongly.
  bool has_mode = sample.mode.has_value();
  std::string_view mode = has_mode ? std::string_view(*sample.mode) : std::string_view();
  for (const auto& [field, value] : sample.fields) {
    if (field == "mode") {
      has_mode = true;
      mode = value;
    }
  }
  const bool rw_mode = has_mode && (mode == "read" || mode == "write");
  const bool writer = std::any_of(sample.fields.begin(), sample.fields.end(),
                                  [](const auto& field) { return is_writer_field(field.first); });
  const bool rwlock = rw_mode || writer;
  if (sample.fields.empty() && !rw_mode) return result;
  bool all_fields = true;
  bool all_counts = true;
  for (const auto& [field, count] : sample.fields) {
    if (rwlock && field == "mode") continue;
    all_fields = all_fields && (is_owner_field(field) || (rwlock && is_writer_field(field)));
    all_counts = all_counts && all_of(count, is_digit) && count != "0";
  }
  if (!all_fields) return result;  // not Redisson's: other
  result.lock_class = rwlock ? LockClass::redisson_rwlock : LockClass::redisson;
  if (!all_counts || (writer && has_mode && !rw_mode)) add(result, Flag::bad_value);
  if (sample.pttl_ms == -1) add(result, Flag::no_ttl);
  return result;
}

// Keys Redisson's objects name after another: a fair lock's queue and deadlines, a read/write
// lock's reader timeout keys ({K}:<uuid>:<n>:rwlock_timeout:<i>), a permit-expirable semaphore's
// leases ({K}:timeout). nullopt for any other name.
std::optional<Classification> classify_by_name(const KeySample& sample) {
  const std::string_view key = sample.key;
  const auto with_type = [&](LockClass lock_class, std::string_view type) {
    Classification result;
    result.lock_class = lock_class;
    if (sample.type != type) add(result, Flag::wrong_type);
    return result;
  };
  if (key.starts_with("redisson_lock_queue:")) return with_type(LockClass::redisson_fair_queue, "list");
  if (key.starts_with("redisson_lock_timeout:")) return with_type(LockClass::redisson_fair_queue, "zset");
  if (const auto at = key.rfind(":rwlock_timeout:"); at != std::string_view::npos && all_of(key.substr(at + 16), is_digit)) {
    Classification result = with_type(LockClass::redisson_rwlock, "string");
    if (sample.pttl_ms == -1) add(result, Flag::no_ttl);
    return result;
  }
  if (key.ends_with("}:timeout") && sample.type == "zset") return with_type(LockClass::redisson_semaphore, "zset");
  return std::nullopt;
}

LockClass hinted_class(TypeHint hint) {
  switch (hint) {
    case TypeHint::legacy_ms:
      return LockClass::legacy_ms;
    case TypeHint::legacy_seconds:
      return LockClass::legacy_seconds;
    case TypeHint::legacy_uuid_ms:
      return LockClass::legacy_uuid_ms;
    case TypeHint::token:
      return LockClass::token;
    case TypeHint::redisson:
      return LockClass::redisson;
    case TypeHint::semaphore:
      return LockClass::redisson_semaphore;
    case TypeHint::latch:
      return LockClass::redisson_latch;
    case TypeHint::none:
      break;
  }
  return LockClass::other;
}

std::optional<LegacyFormat> hinted_format(TypeHint hint) {
  switch (hint) {
    case TypeHint::legacy_ms:
      return LegacyFormat::epoch_ms;
    case TypeHint::legacy_seconds:
      return LegacyFormat::epoch_seconds;
    case TypeHint::legacy_uuid_ms:
      return LegacyFormat::uuid_ms;
    default:
      return std::nullopt;
  }
}

// With a type hint every key matched is taken to be a lock of that kind.
Classification classify_hinted(const KeySample& sample, std::int64_t now_ms, const ClassifyOptions& options) {
  Classification result;
  result.lock_class = hinted_class(options.hint);
  const std::string_view wanted = options.hint == TypeHint::redisson ? "hash" : "string";
  if (sample.type != wanted) {
    add(result, Flag::wrong_type);
    return result;
  }
  if (options.hint == TypeHint::redisson) {
    Classification hash = classify_hash(sample);
    // Fields that could not be sampled are not known to be bad; a read/write lock is Redisson's.
    if (hash.lock_class == LockClass::redisson_rwlock) return hash;
    if (hash.lock_class != LockClass::redisson && !sample.fields.empty()) add(hash, Flag::bad_value);
    if (sample.fields.empty() && sample.pttl_ms == -1) add(hash, Flag::no_ttl);
    hash.lock_class = LockClass::redisson;
    return hash;
  }
  if (options.hint == TypeHint::token) {
    if (sample.pttl_ms == -1) add(result, Flag::no_ttl);
    return result;
  }
  if (options.hint == TypeHint::semaphore || options.hint == TypeHint::latch) {
    const std::string_view value = sample.value;
    const bool integer = !sample.truncated && all_of(value.starts_with('-') ? value.substr(1) : value, is_digit);
    if (!integer) add(result, Flag::bad_value);
    return result;
  }
  if (auto legacy =
          sample.truncated ? std::nullopt : as_legacy(sample.value, now_ms, options, hinted_format(options.hint))) {
    if (legacy->lock_class == LockClass::legacy_forever && sample.pttl_ms == -1) add(*legacy, Flag::no_ttl);
    return *legacy;
  }
  add(result, Flag::bad_value);
  return result;
}

}  // namespace

Classification classify(const KeySample& sample, std::int64_t server_now_ms, const ClassifyOptions& options) {
  if (sample.type == "none") return {};  // deleted between SCAN and the read
  if (auto named = classify_by_name(sample)) return *named;
  if (options.hint != TypeHint::none) return classify_hinted(sample, server_now_ms, options);
  if (sample.type == "string") return classify_string(sample, server_now_ms, options);
  if (sample.type == "hash") return classify_hash(sample);
  Classification result;
  if (sample.key.starts_with("lock-signal:")) {
    result.lock_class = LockClass::python_redis_lock;
    if (sample.type != "list") add(result, Flag::wrong_type);
  } else if (sample.key.starts_with("lock:")) {
    // python-redis-lock's lock name, holding something else than its string id.
    result.lock_class = LockClass::python_redis_lock;
    add(result, Flag::wrong_type);
  }
  return result;
}

std::optional<Flag> flag_from_string(std::string_view name) noexcept {
  std::string underscored(name);
  std::replace(underscored.begin(), underscored.end(), '-', '_');
  return kFlagNames.parse(underscored);
}

}  // namespace lockbridge::tools::audit
