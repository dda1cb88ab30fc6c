#include "strategies/legacy_timestamp.hpp"

#include <algorithm>
#include <array>

#include "lockbridge/error.hpp"
#include "lockbridge/identity.hpp"
#include "strategies/companion_keys.hpp"

namespace lockbridge::detail {
namespace {

[[noreturn]] void throw_bad_value(std::string_view key, std::string_view value, LegacyFormat format,
                                  std::string_view what_it_is_not = "a valid") {
  constexpr std::size_t kShown = 64;
  std::string shown = printable_key(value.substr(0, kShown));
  if (value.size() > kShown) shown += " (" + std::to_string(value.size()) + " bytes)";
  throw Error(Errc::bad_value, describe("acquire", key) + ": value " + shown + " is not " +
                                   std::string(what_it_is_not) + " " + std::string(to_string(format)) +
                                   " expiry stamp; the lock is treated as held and left unchanged");
}

std::optional<std::chrono::milliseconds> remaining(const LegacyStamp& stamp, std::int64_t now_ms) {
  if (stamp.forever) return std::nullopt;
  return std::chrono::milliseconds(stamp.expiry_ms - now_ms);
}

// uuid_ms: the UUID given (LegacyOptions::owner), else a fresh one for this lock object, as
// jedis-lock master keeps one per object. Other formats carry no owner.
std::string owner_uuid(const LegacyOptions& options) {
  if (options.format != LegacyFormat::uuid_ms) return {};
  return options.owner.empty() ? random_uuid() : options.owner;
}

Task<LockInfo> inspect_legacy(Link& link, std::string_view key, std::string_view my_value, LegacyFormat format) {
  LockInfo info = co_await read_lock_info(link, key, my_value);
  if (info.exists) info.stamp = parse_legacy_value(info.value, format);
  co_return info;
}

}  // namespace

// ---- faithful: jedis-lock 1.0.0 --------------------------------------------------------------

LegacyFaithful::LegacyFaithful(const LegacyOptions& options, ScriptCache& scripts)
    : LockStrategy(scripts), options_(options), owner_(owner_uuid(options)) {}

Task<AcquireAttempt> LegacyFaithful::try_acquire(Link& link, std::string_view key,
                                                 const AttemptRequest& request) {  // learns remaining always
  const std::chrono::milliseconds lease = request.lease;
  const ReplyContext context("acquire", key);
  const std::int64_t now = wall_clock_ms(options_.clock_offset);
  const std::string value = format_legacy_value(options_.format, now + lease.count() + 1, owner_);
  AcquireAttempt attempt;

  const ReplyPtr setnx = co_await link.command("SETNX", key, value);
  if (expect_integer(*setnx, context) == 1) {
    attempt.acquired = true;
    attempt.value = value;
    co_return attempt;
  }
  const ReplyPtr got = co_await link.command("GET", key);
  const std::optional<std::string> current = string_or_nil(*got, context);
  if (options_.jedis_lock_master) {
    // jedis-lock master reads nothing or garbage as an expired lock and GETSETs it (docs/wire-formats.md hazard 1).
    if (!jedis_lock_master_may_take(current, owner_, now)) {
      if (const auto stamp = parse_legacy_value(*current, options_.format))
        attempt.holder_remaining = remaining(*stamp, now);
      co_return attempt;
    }
  } else {
    if (!current) co_return attempt;  // released between SETNX and GET: jedis-lock just sleeps and retries
    const auto stamp = parse_legacy_value(*current, options_.format);
    if (!stamp) throw_bad_value(key, *current, options_.format);  // jedis-lock throws NumberFormatException
    const bool mine = !owner_.empty() && stamp->owner == owner_;
    if (!is_expired(*stamp, now) && !mine) {
      attempt.holder_remaining = remaining(*stamp, now);
      co_return attempt;
    }
  }
  // Expired: GETSET, and the lock is ours only if nobody else's GETSET came first. A losing GETSET
  // has still overwritten the value with ours; the peers accept this, and so must we. (After a
  // nil GET, master's GETSET wins nothing now, but leaves our value for its next round's "mine".)
  const ReplyPtr swapped = co_await link.command("GETSET", key, value);
  const std::optional<std::string> old = string_or_nil(*swapped, context);
  if (old && current && *old == *current) {
    attempt.acquired = true;
    attempt.value = value;
  }
  co_return attempt;
}

Task<ReleaseOutcome> LegacyFaithful::release(Link& link, std::string_view key, std::string_view /*value*/,
                                             std::string_view /*release_channel*/) {
  // jedis-lock 1.0.0 deletes whatever is there, even a lock taken over after our lease ended, and
  // announces nothing: its waiters poll.
  const ReplyPtr reply = co_await link.command("DEL", key);
  co_return expect_integer(*reply, ReplyContext("release", key)) == 1 ? ReleaseOutcome::released
                                                                      : ReleaseOutcome::not_ours;
}

namespace {
[[noreturn]] void refuse_faithful_extend(std::string_view key) {
  throw Error(Errc::bad_option, describe("extend", key) +
                                    ": jedis-lock 1.0.0 has no extend, so the faithful preset has none (nor a "
                                    "watchdog); use the hardened preset");
}
}  // namespace

ScriptCall LegacyFaithful::extend_call(std::string_view key, std::string_view /*value*/,
                                       std::chrono::milliseconds /*lease*/) const {
  refuse_faithful_extend(key);
}

std::optional<std::string> LegacyFaithful::extend_outcome(const redisReply& /*reply*/, std::string_view key,
                                                          std::string_view /*value*/) const {
  refuse_faithful_extend(key);
}

Task<LockInfo> LegacyFaithful::inspect(Link& link, std::string_view key, std::string_view my_value) {
  co_return co_await inspect_legacy(link, key, my_value, options_.format);
}

// ---- hardened: same bytes, server clock, safety TTL, owner-checked release ---------------------

LegacyHardened::LegacyHardened(const MutexOptions& options, ScriptCache& scripts)
    : LockStrategy(scripts),
      options_(options.legacy),
      owner_(owner_uuid(options.legacy)),
      waiter_timeout_ms_(std::to_string(options.fair_waiter_timeout.count())) {}

std::string LegacyHardened::unit() const { return options_.format == LegacyFormat::epoch_seconds ? "s" : "ms"; }
char LegacyHardened::stamp_kind() const { return options_.format == LegacyFormat::epoch_seconds ? 's' : 'm'; }

ScriptCall LegacyHardened::acquire_call(std::string_view key, std::chrono::milliseconds lease,
                                        std::string_view expected, const AttemptRequest* request) const {
  const bool cas = !expected.empty();
  const bool queued = !cas && request && !request->queued_waiter.empty();
  ScriptCall call{&kLegacyHardenedAcquire,
                  {std::string(key)},
                  {cas      ? "cas"
                   : queued ? "queued"
                            : "nx",
                   owner_.empty() ? std::string() : owner_ + ":", unit(), std::to_string(lease.count()),
                   std::to_string((lease + options_.safety_ttl_grace).count()), std::string(expected)}};
  if (queued) {
    call.keys.insert(call.keys.end(), {waiter_queue(key), waiter_times(key), grant_record(key)});
    call.args.insert(call.args.end(), {std::string(request->queued_waiter), waiter_timeout_ms_, starving_in_arg(*request),
                                       grant_spec(*request, options_.safety_ttl_grace, false, stamp_kind(),
                                                  owner_.empty() ? std::string() : owner_ + ":")});
  }
  return call;
}

LegacyHardened::ScriptResult LegacyHardened::read_acquire_reply(const redisReply& reply, const ReplyContext& context) {
  throw_if_error(reply, context);
  const redisReply& result = expect_array(reply, 4, context);
  ScriptResult out;
  out.written = expect_integer(*result.element[0], context) == 1;
  out.value = string_or_nil(*result.element[1], context);
  out.server_now_ms = expect_integer(*result.element[2], context);
  out.pttl_ms = expect_integer(*result.element[3], context);
  out.granted = result.elements >= 5;
  return out;
}

Task<LegacyHardened::ScriptResult> LegacyHardened::run_acquire_script(Link& link, std::string_view key,
                                                                      std::chrono::milliseconds lease,
                                                                      std::string_view expected,
                                                                      const AttemptRequest* queued) {
  const ScriptCall call = acquire_call(key, lease, expected, queued);
  const auto replies = co_await run_scripts(link, scripts_, std::span(&call, 1));
  co_return read_acquire_reply(*replies.front(), ReplyContext(expected.empty() ? "acquire" : "take over", key));
}

Task<AcquireAttempt> LegacyHardened::try_acquire(Link& link, std::string_view key,
                                                 const AttemptRequest& request) {  // learns remaining always
  const std::chrono::milliseconds lease = request.lease;
  AcquireAttempt attempt;
  ScriptResult result = co_await run_acquire_script(link, key, lease, std::string_view(), &request);
  if (!result.written && result.value) {
    const auto stamp = parse_legacy_value(*result.value, options_.format);
    // A value no stamp reads but with a TTL is a lock of another kind (a token lock, while a fleet
    // moves to token: docs/migration.md): held until its TTL runs out, as a token client judges it.
    // PTTL 0 is its last millisecond, still held.
    if (!stamp && result.pttl_ms >= 0) {
      attempt.holder_remaining = std::chrono::milliseconds(result.pttl_ms);
      co_return attempt;
    }
    // Never steal what cannot be judged: garbage, negative stamps, or a unit mix-up (a seconds
    // stamp read as milliseconds would look expired since 1970).
    if (!stamp) throw_bad_value(key, *result.value, options_.format);
    if (!is_plausible(*stamp, options_.format)) {
      throw_bad_value(key, *result.value, options_.format, "a plausible (right unit?)");
    }
    const bool mine = !owner_.empty() && stamp->owner == owner_;
    if (!is_expired(*stamp, result.server_now_ms) && !mine) {
      attempt.holder_remaining = remaining(*stamp, result.server_now_ms);
      co_return attempt;
    }
    // Expired by the server's clock: replace it only if it is still exactly what we judged.
    const std::string judged = *result.value;
    result = co_await run_acquire_script(link, key, lease, judged);
    if (result.written && !request.queued_waiter.empty()) co_await leave_queue_after_takeover(link, key, request);
  }
  if (result.written && result.value) {
    attempt.acquired = true;
    attempt.value = std::move(*result.value);
    if (result.granted) {
      // A release granted it to this waiter: it lasts until its stamp or the key's TTL, whichever
      // ends first (a stamp in seconds is rounded up past the TTL).
      const auto stamp = parse_legacy_value(attempt.value, options_.format);
      const auto left = stamp ? remaining(*stamp, result.server_now_ms) : std::nullopt;
      auto granted = std::min(left.value_or(std::chrono::milliseconds(0)), std::chrono::milliseconds(result.pttl_ms));
      attempt.granted_remaining = std::max(std::chrono::milliseconds(0), granted);
    }
  }
  co_return attempt;
}

Task<void> LegacyHardened::leave_queue_after_takeover(Link& link, std::string_view key,
                                                      const AttemptRequest& request) {
  try {
    const std::string queue = waiter_queue(key);
    const std::string times = waiter_times(key);
    co_await remove_from_queue(link, queue, times, request.queued_waiter);
  } catch (...) {  // best effort: the entry is dropped at its deadline, and a grant to it runs out
  }
}

Task<ReleaseOutcome> LegacyHardened::release(Link& link, std::string_view key, std::string_view value,
                                             std::string_view release_channel) {
  // The announcement is a PUBLISH on a channel Java peers never read, and a grant to a starving
  // waiter writes a stamp they read as any held lock: both invisible to them.
  const std::string queue = waiter_queue(key);
  const std::string times = waiter_times(key);
  const std::string record = grant_record(key);
  const std::string fences = fence_counter(key);  // never drawn from: legacy waiters ask for no fence
  const char kind = stamp_kind();
  const std::array<std::string_view, 5> keys{key, queue, times, record, fences};
  const std::array<std::string_view, 4> args{value, release_channel, std::string_view(&kind, 1),
                                             options_.format == LegacyFormat::uuid_ms ? "uuid" : ""};
  co_return co_await release_by_script(link, scripts_, kCompareAndHandOff, keys, args);
}

Task<void> LegacyHardened::leave_queue(Link& link, std::string_view key, std::string_view queued_waiter) {
  const std::string queue = waiter_queue(key);
  const std::string times = waiter_times(key);
  co_await leave_queue_passing_on(*this, link, key, queue, times, queued_waiter);
}

// A compare-and-set of a new stamp: Java peers read the later expiry like any other.
ScriptCall LegacyHardened::extend_call(std::string_view key, std::string_view value,
                                       std::chrono::milliseconds lease) const {
  return acquire_call(key, lease, value);
}

std::optional<std::string> LegacyHardened::extend_outcome(
    const redisReply& reply, std::string_view key, std::string_view /*value: the reply has the new stamp*/) const {
  ScriptResult result = read_acquire_reply(reply, ReplyContext("extend", key));
  if (!result.written) return std::nullopt;
  return result.value;
}

Task<LockInfo> LegacyHardened::inspect(Link& link, std::string_view key, std::string_view my_value) {
  co_return co_await inspect_legacy(link, key, my_value, options_.format);
}

}  // namespace lockbridge::detail
