// What convert does with one key: rewrite it in the other format, delete it (a stale legacy lock,
// with --delete-stale), or leave it and say why. Pure: it decides from what one read of the key
// returned (value, PEXPIRETIME) and audit's classification of it; converter.cpp carries it out with
// a compare-and-set. docs/migration.md gives every rule.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "audit/classify.hpp"
#include "lockbridge/legacy_value.hpp"
#include "lockbridge/name_table.hpp"

namespace lockbridge::tools::convert {

enum class Target { token, legacy };

enum class Action {
  to_token,   // a live legacy lock becomes a fresh token with PXAT = the stamp's expiry
  to_legacy,  // a token lock becomes the stamp of its lease's end; its TTL is kept
  remove,     // a stale legacy lock is deleted (--delete-stale)
  skip,       // left alone; Plan::reason says why
};

enum class Reason {
  none,            // not skipped
  already_target,  // already in the format asked for
  changed,         // the value or TTL changed between the read and the write (compare-and-set)
  stale,           // a legacy lock whose expiry has passed (deleted only with --delete-stale)
  no_ttl,          // a token lock without a TTL: there is no lease end to write as a stamp
  forever,         // legacy_forever: held until deleted, no expiry to carry over
  far_future,      // an expiry suspiciously far ahead (unit mix-up?): fix by hand
  bad_value,       // not a valid lock of its class
  wrong_type,      // not a string
  foreign,         // Redisson's objects (redisson, redisson_*), python_redis_lock: never converted
  not_a_lock,      // class `other`: counted, never touched
};
inline constexpr Reason kEveryReason[] = {Reason::already_target, Reason::changed,    Reason::stale,
                                          Reason::no_ttl,         Reason::forever,    Reason::far_future,
                                          Reason::bad_value,      Reason::wrong_type, Reason::foreign};

// The names the journal and --details use.
inline constexpr NameTable<Action, 4> kActionNames{
    std::array<std::pair<Action, std::string_view>, 4>{{{Action::to_token, "to_token"},
                                                        {Action::to_legacy, "to_legacy"},
                                                        {Action::remove, "delete"},
                                                        {Action::skip, "skip"}}}};
inline constexpr NameTable<Reason, 11> kReasonNames{
    std::array<std::pair<Reason, std::string_view>, 11>{{{Reason::none, "none"},
                                                         {Reason::already_target, "already_target"},
                                                         {Reason::changed, "changed"},
                                                         {Reason::stale, "stale"},
                                                         {Reason::no_ttl, "no_ttl"},
                                                         {Reason::forever, "forever"},
                                                         {Reason::far_future, "far_future"},
                                                         {Reason::bad_value, "bad_value"},
                                                         {Reason::wrong_type, "wrong_type"},
                                                         {Reason::foreign, "foreign"},
                                                         {Reason::not_a_lock, "not_a_lock"}}}};

constexpr std::string_view to_string(Action action) noexcept { return kActionNames.name(action, "skip"); }
constexpr std::string_view to_string(Reason reason) noexcept { return kReasonNames.name(reason, "none"); }
constexpr std::optional<Action> action_from_string(std::string_view name) noexcept { return kActionNames.parse(name); }

struct ConvertOptions {
  Target to = Target::token;
  LegacyFormat format = LegacyFormat::epoch_ms;  // --to legacy: the stamp written
  bool delete_stale = false;
  audit::ClassifyOptions classify;  // what counts as far_future (no type hint: convert judges by shape)
};

// Where fresh identities come from (tests pass fixed ones): the token strategy's token format, and
// a UUID for the uuid-ms stamp's owner.
struct FreshIdentities {
  std::function<std::string()> token;
  std::function<std::string()> uuid;
};

struct Plan {
  Action action = Action::skip;
  Reason reason = Reason::none;
  std::string new_value;               // to_token, to_legacy
  std::int64_t new_expire_at_ms = -1;  // to_token: the PXAT written; to_legacy: the TTL kept (epoch ms)
};

// `sample` must have been read with its PEXPIRETIME (read_keys(..., expire_time = true)).
Plan plan_key(const audit::KeySample& sample, const audit::Classification& found, const ConvertOptions& options,
              const FreshIdentities& fresh);

}  // namespace lockbridge::tools::convert
