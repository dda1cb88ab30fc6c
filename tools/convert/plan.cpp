#include "plan.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace lockbridge::tools::convert {

namespace {

using audit::Flag;
using audit::LockClass;

Plan skipped(Reason reason) {
  Plan plan;
  plan.reason = reason;
  return plan;
}

bool is_timestamp_class(LockClass lock_class) {
  return lock_class == LockClass::legacy_ms || lock_class == LockClass::legacy_seconds ||
         lock_class == LockClass::legacy_uuid_ms;
}

// A live stamp becomes a fresh token whose key lives exactly as long as a legacy peer would call
// the lock held, and never longer than a TTL the key already had (a hardened writer's safety TTL):
// the lease is neither shortened nor extended. Peers call a stamp expired when `expiry < now`, and
// Redis removes a key when `now > PEXPIRETIME`, so the stamp and PEXPIRETIME are the same number.
Plan to_token(const audit::KeySample& sample, const audit::Classification& found, const ConvertOptions& options,
              const FreshIdentities& fresh) {
  if (found.lock_class == LockClass::token) return skipped(Reason::already_target);
  if (found.lock_class == LockClass::legacy_forever) return skipped(Reason::forever);
  if (found.has(Flag::far_future)) return skipped(Reason::far_future);
  if (found.has(Flag::stale)) {
    if (!options.delete_stale) return skipped(Reason::stale);
    Plan plan;
    plan.action = Action::remove;
    return plan;
  }
  Plan plan;
  plan.action = Action::to_token;
  plan.new_value = fresh.token();
  plan.new_expire_at_ms = *found.expiry_ms;
  if (sample.expire_at_ms >= 0) plan.new_expire_at_ms = std::min(plan.new_expire_at_ms, sample.expire_at_ms);
  return plan;
}

// A token's lease ends when its TTL runs out; the stamp says the same moment (see to_token), and
// the TTL stays as the safety net.
Plan to_legacy(const audit::KeySample& sample, const audit::Classification& found, const ConvertOptions& options,
               const FreshIdentities& fresh) {
  if (found.lock_class != LockClass::token) return skipped(Reason::already_target);
  if (sample.expire_at_ms < 0) return skipped(Reason::no_ttl);
  Plan plan;
  plan.action = Action::to_legacy;
  const std::string owner = options.format == LegacyFormat::uuid_ms ? fresh.uuid() : std::string();
  plan.new_value = format_legacy_value(options.format, sample.expire_at_ms, owner);
  plan.new_expire_at_ms = sample.expire_at_ms;
  return plan;
}

}  // namespace

Plan plan_key(const audit::KeySample& sample, const audit::Classification& found, const ConvertOptions& options,
              const FreshIdentities& fresh) {
  if (found.lock_class == LockClass::other) return skipped(Reason::not_a_lock);
  if (audit::is_redisson_family(found.lock_class) || found.lock_class == LockClass::python_redis_lock) {
    return skipped(Reason::foreign);
  }
  if (found.has(Flag::wrong_type) || sample.type != "string") return skipped(Reason::wrong_type);
  if (found.has(Flag::bad_value) || sample.truncated) return skipped(Reason::bad_value);
  if (is_timestamp_class(found.lock_class) && !found.expiry_ms) return skipped(Reason::bad_value);
  return options.to == Target::token ? to_token(sample, found, options, fresh)
                                     : to_legacy(sample, found, options, fresh);
}

}  // namespace lockbridge::tools::convert
