// Every Lua script lockbridge runs, in one place. They are called with EVALSHA, falling back to
// EVAL on NOSCRIPT (script_runner.hpp).
//
// Redis does not undo a script's writes when a later command in it fails, so every script here
// runs what can fail on the data (a key of the wrong type, a counter that is not a number, an INCR
// the ACL denies) before its first write, or runs it with redis.pcall after the writes that matter:
// such a failed call leaves the lock key as it was, as docs/errors.md promises. Announcements of a
// release (SPUBLISH / PUBLISH) come after the deletion and are best effort: a waiter that misses
// one finds the lock free at its next scheduled attempt. Not covered: an ACL that allows a
// script's first write but denies a later command (allows INCR but not SET, or HINCRBY but not
// PEXPIRE); the ACL of every command is not checked ahead (redis.acl_check_cmd is Redis 7 only).
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace lockbridge::detail {

struct Script {
  std::string_view name;
  std::string_view body;
};

// A queue of waiters in Redis: fair mode's (WaitMode::fair), and in notify mode every waiter's
// (docs/design.md §10.5). A list of waiter ids in arrival order, and a hash of each waiter's entry,
// "<deadline> <starving at> <grant spec>" in server milliseconds (older entries: "<deadline>" or
// "<deadline> <starving at>", without a spec). The deadline is refreshed by the waiter's every
// attempt; the starving time is set when it joins (MutexOptions::starvation_after ahead; 0 in fair
// mode, whose queue is served strictly in order). The grant spec says how a release makes the
// waiter the holder at once (grant() below); a waiter without one is handed the key to claim.
// live_head() drops the waiters at the front whose deadline has passed (they stopped asking: dead
// or gone) and returns the first live one with its deadline, whether it starves and its spec, or
// false: nobody live waits, or a queue key holds another type. It reads with pcall, which turns a
// key of another type into a value instead of ending the script, so a release needs no TYPE calls
// of its own (each call a script makes is most of what it costs the server), and it writes only
// what it has read as a list and a hash. queue_error(i) is the error reply when the queue
// (KEYS[i]) or its times (KEYS[i + 1]) hold another type, checked before anything is written; nil
// when both are fine. now() is the server's
// clock in milliseconds, read (TIME) at most once per call and only when needed: a release that
// finds no queue never reads it.
inline constexpr char kFairPrelude[] = R"lua(
local now_ms
local function now()
  if not now_ms then
    local t = redis.call('TIME')
    now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return now_ms
end
local function live_head(queue, times)
  while true do
    local head = redis.pcall('LINDEX', queue, 0)
    if type(head) ~= 'string' then return false end
    local entry = redis.pcall('HGET', times, head)
    if type(entry) == 'table' then return false end
    local deadline, starving_at, spec = string.match(entry or '', '^(%d+) ?(%d*) ?(.*)$')
    deadline = tonumber(deadline)
    if deadline and deadline > now() then
      starving_at = tonumber(starving_at)
      if spec == '' then spec = nil end
      return head, deadline, not starving_at or starving_at <= now(), spec
    end
    redis.call('LPOP', queue)
    redis.call('HDEL', times, head)
  end
end
local function queue_error(first)
  for i, want in pairs({[first] = 'list', [first + 1] = 'hash'}) do
    local kind = redis.call('TYPE', KEYS[i])['ok']
    if kind ~= 'none' and kind ~= want then
      return redis.error_reply('WRONGTYPE queue key KEYS[' .. i .. '] holds a ' .. kind .. ', not a ' .. want)
    end
  end
end
-- Whom a release serves, from the queue at KEYS[first]: its live head, how many milliseconds
-- that waiter has left (its own deadline), whether it starves, and its grant spec (nil: none). A
-- starving head is given the lock; any other is only woken, to race newcomers for the freed lock.
-- false when nobody live waits there, or the queue keys are of another type (the release then
-- frees the lock for all).
local function next_in_line(first)
  local head, deadline, starving, spec = live_head(KEYS[first], KEYS[first + 1])
  if not head then return false end
  return head, deadline - now(), starving, spec
end
-- Queues `waiter` at KEYS[first] (or refreshes its deadline, `timeout` ms ahead); a waiter that
-- joins in notify mode starves `starving_in` ms from now (nil or '' in fair mode: at once). `spec`
-- (nil or '': none) is how a release grants it the lock (grant()), replaced at every attempt. Both
-- keys outlive the last attempt by two waiter timeouts.
local function keep_place(first, waiter, timeout, starving_in, spec)
  timeout = tonumber(timeout)
  local times = KEYS[first + 1]
  local before = redis.call('HGET', times, waiter)
  local value = string.format('%.0f', now() + timeout)
  if starving_in == '' then starving_in = nil end
  if starving_in then
    local starving_at = before and string.match(before, '^%d+ (%d+)')
    value = value .. ' ' .. (starving_at or string.format('%.0f', now() + tonumber(starving_in)))
  elseif spec and spec ~= '' then
    value = value .. ' 0'
  end
  if spec and spec ~= '' then value = value .. ' ' .. spec end
  redis.call('HSET', times, waiter, value)
  if not before then redis.call('RPUSH', KEYS[first], waiter) end
  redis.call('PEXPIRE', KEYS[first], 2 * timeout)
  redis.call('PEXPIRE', times, 2 * timeout)
end
-- Whether `waiter` may take a free lock, by the queue at KEYS[first]: nobody live is queued, or
-- `waiter` is first, or the first does not starve yet (it races like anyone else).
local function may_take_free(first, waiter)
  local head, _, starving = live_head(KEYS[first], KEYS[first + 1])
  return not head or head == waiter or not starving
end
-- Announces a release on `channel` ('' for none) with `payload`, which names `waiter` (nil: every
-- waiter). A waiter id "<tag>-<random>" belongs to a Client that listens on channel .. ':' .. tag
-- (the same hash slot), so only that waiter's process wakes, not every one subscribed to the
-- lock (docs/design.md §10.2); other ids hear it on the channel itself.
local function announce(channel, waiter, payload)
  if channel == '' then return end
  local tag = waiter and string.match(waiter, '^(%x+)%-')
  if tag then channel = channel .. ':' .. tag end
  redis.pcall('SPUBLISH', channel, payload)
end
-- Takes `waiter` out of the queue at KEYS[first]: it got the lock.
local function leave_place(first, waiter)
  redis.call('LREM', KEYS[first], 1, waiter)
  redis.call('HDEL', KEYS[first + 1], waiter)
end
-- A queued attempt's view of the lock KEYS[1] and its queue (KEYS[2], KEYS[3]): the lock key's
-- type ('string' or 'none'), and whether a free lock may be taken by `waiter` (may_take_free); or
-- nil, nil and the error reply when the lock or a queue key holds another type. Runs before
-- anything is written.
local function queued_view(waiter)
  local kind = redis.call('TYPE', KEYS[1])['ok']
  if kind ~= 'string' and kind ~= 'none' then
    return nil, nil, redis.error_reply('WRONGTYPE lock key holds a ' .. kind .. ', not a string')
  end
  local bad_queue = queue_error(2)
  if bad_queue then return nil, nil, bad_queue end
  return kind, may_take_free(2, waiter)
end
)lua";

// The parts one after another, as one NUL-terminated string built at compile time: scripts that
// share Lua functions (a prelude) with others.
template <std::size_t... Sizes>
constexpr auto joined(const char (&... parts)[Sizes]) {
  std::array<char, (Sizes + ...) - sizeof...(Sizes) + 1> out{};
  std::size_t at = 0;
  const auto append = [&](const char* part, std::size_t size) {
    for (std::size_t i = 0; i + 1 < size; ++i) out[at++] = part[i];
  };
  (append(parts, Sizes), ...);
  return out;
}

// A script made of joined() parts.
template <std::size_t Size>
constexpr Script script_of(std::string_view name, const std::array<char, Size>& text) {
  return Script{name, {text.data(), Size - 1}};
}

// draw_fence(i): the next fencing token from the counter KEYS[i], or (nil, the error reply that ends
// the call) when the counter cannot give one. Called before the script's first write, so a refusal
// writes nothing. The counter must be absent or a whole number from 0 to 2^53 - 2: Redis's Lua
// numbers are doubles, and a larger counter would hand out rounded, repeated fences. A counter of
// another type, or an INCR the ACL denies, is Redis's own error.
inline constexpr char kFencePrelude[] = R"lua(
local function draw_fence(i)
  local where = ' (fence counter KEYS[' .. i .. ']; nothing was written)'
  local counter = redis.pcall('GET', KEYS[i])
  if type(counter) == 'table' then return nil, redis.error_reply(counter.err .. where) end
  if counter then
    local digits = string.match(counter, '^%d+$') ~= nil
    if not digits or #counter > 16 or (#counter == 16 and counter >= '9007199254740991') then
      return nil, redis.error_reply('ERR value is not an integer from 0 to 2^53 - 2' .. where)
    end
  end
  local fence = redis.pcall('INCR', KEYS[i])
  if type(fence) == 'table' then return nil, redis.error_reply(fence.err .. where) end
  return fence
end
)lua";

// Direct grant (docs/design.md §10.6): a release makes the starving head of the queue the holder
// in the same script, so the waiter holds the lock when the message naming it arrives, with no
// claim of its own. Needs now() (kFairPrelude) and draw_fence() (kFencePrelude).
//
// A waiter's grant spec, sent with each of its queued attempts and kept in its queue entry:
//   "<tag> <lease ms> <extra ms> <fence 0|1> <kind> <rest>"
// tag: the attempt that sent it (the waiter trusts a grant message only when it carries the tag of
// its last attempt, so a grant that ran out before that attempt ran is never taken for a new one);
// lease: what the grant holds it for (MutexOptions::grant_lease at most: a waiter that died blocks
// nobody longer); extra: the key's TTL beyond that (hardened legacy's safety grace); fence 1: draw a
// fencing token; kind 't': the key's value is rest (the token), 's' / 'm': a jedis-lock stamp of
// now + lease + 1 in seconds / milliseconds after the prefix rest ('' or '<uuid>:'), which Java
// peers read as an ordinary held lock.
//
// grant(waiter, spec, lock, record, fence_at) writes KEYS[lock] for `waiter`, and in KEYS[record]
// "<waiter> <fence> <value>" (fence 0 without fencing), with the same TTL, for the waiter's next
// attempt and for `lockbridge watch`. Returns the value, the fence and the payload of the message
// that tells the waiter it holds the lock ("<waiter> <tag> <fence> <value>"); nil for a spec it
// cannot read or a fence the counter KEYS[fence_at] refuses, having written nothing.
//
// granted_to(waiter, lock, record): the value and fence a grant gave `waiter`, when KEYS[lock]
// still holds that value, else nil. The record stays until the holder's release (or its TTL): an
// attempt that found it and whose reply was lost leaves it for the waiter's leaving, which
// releases the grant (leave_queue_passing_on).
inline constexpr char kGrantPrelude[] = R"lua(
local function grant(waiter, spec, lock, record, fence_at)
  local tag, lease, extra, fenced, kind, rest = string.match(spec, '^(%d+) (%d+) (%d+) ([01]) ([tsm]) (.*)$')
  if not tag then return nil end
  local fence = 0
  if fenced == '1' then
    local refused
    fence, refused = draw_fence(fence_at)
    if refused then return nil end
  end
  local value = rest
  if kind ~= 't' then
    local stamp = now() + tonumber(lease) + 1
    if kind == 's' then stamp = math.ceil(stamp / 1000) end
    value = rest .. string.format('%.0f', stamp)
  end
  local ttl = tonumber(lease) + tonumber(extra)
  -- Whole digits: Lua would write a fence of 1e14 or more as 1.2345678901234e+14.
  local digits = string.format('%.0f', fence)
  redis.call('SET', KEYS[lock], value, 'PX', ttl)
  redis.call('SET', KEYS[record], waiter .. ' ' .. digits .. ' ' .. value, 'PX', ttl)
  return value, fence, waiter .. ' ' .. tag .. ' ' .. digits .. ' ' .. value
end
local function granted_to(waiter, lock, record)
  local entry = redis.pcall('GET', KEYS[record])
  if type(entry) ~= 'string' then return nil end
  local who, fence, value = string.match(entry, '^(%S+) (%d+) (.*)$')
  if who ~= waiter or redis.call('GET', KEYS[lock]) ~= value then return nil end
  return value, tonumber(fence)
end
)lua";

// Token acquire. KEYS[1] lock, KEYS[2] (fencing only) the fence counter; ARGV[1] token, ARGV[2]
// lease ms. {1} when acquired, {1, fence} with fencing: the counter's next value, drawn in the same
// call, so a later acquisition always carries a larger fence. {0, pttl} when held by someone else,
// so the waiter knows when the lease ends. A key of another type is an error, not a held lock.
// The fence is drawn before the lock is written (draw_fence). Errors name keys as KEYS[n]
// (throw_if_script_error).
inline constexpr auto kTokenAcquireText = joined(kFencePrelude, R"lua(
if redis.call('EXISTS', KEYS[1]) == 0 then
  if #KEYS == 2 then
    local fence, refused = draw_fence(2)
    if refused then return refused end
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
    return {1, fence}
  end
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return {1}
end
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind ~= 'string' then return redis.error_reply('WRONGTYPE lock key holds a ' .. kind .. ', not a string') end
return {0, redis.call('PTTL', KEYS[1])}
)lua");
inline constexpr Script kTokenAcquire = script_of("token_acquire", kTokenAcquireText);

// Queued token acquire: every attempt in fair mode, and a waiting waiter's in notify mode.
// KEYS[1] lock, KEYS[2] queue, KEYS[3] its times, KEYS[4] grant record, KEYS[5] (fencing only)
// fence counter; ARGV[1] token, ARGV[2] lease ms, ARGV[3] waiter id ('' for a single try that does
// not queue), ARGV[4] waiter timeout ms, ARGV[5] (notify mode; '' in fair mode) ms until the waiter
// starves, ARGV[6] the waiter's grant spec ('' for none; kGrantPrelude). The lock is taken when it
// is free and queued_view() allows it (in fair mode: nobody live is queued ahead). A release may
// have made this waiter the holder already: a grant found here (its message was missed or is on
// its way) is the acquisition, {1, fence, value, pttl}; so is a key kMultiRelease handed over
// (holding the waiter's id), claimed here. A waiter that fails is queued once (or has its deadline
// and spec refreshed). Replies as kTokenAcquire ({1, fence}: fence 0 without fencing). Every key's
// type is checked first, and the fence drawn before the lock is written, so a failure writes
// nothing but the queue's own upkeep (dropping waiters that left).
inline constexpr auto kTokenAcquireFairText = joined(kFairPrelude, kFencePrelude, kGrantPrelude, R"lua(
local kind, may_take, refused = queued_view(ARGV[3])
if refused then return refused end
if ARGV[3] ~= '' and kind == 'string' then
  local value, fence = granted_to(ARGV[3], 1, 4)
  if value then
    if fence == 0 and #KEYS == 5 then
      -- Granted without a spec (its releaser made it the waiter's id), so without a fence: drawn now.
      local refused
      fence, refused = draw_fence(5)
      if refused then return refused end
    end
    return {1, fence, value, redis.call('PTTL', KEYS[1])}
  end
end
local handed = ARGV[3] ~= '' and kind == 'string' and redis.call('GET', KEYS[1]) == ARGV[3]
if handed or (kind == 'none' and may_take) then
  local fence = 0
  if #KEYS == 5 then
    local refused
    fence, refused = draw_fence(5)
    if refused then return refused end
  end
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  if ARGV[3] ~= '' then leave_place(2, ARGV[3]) end
  return {1, fence}
end
if ARGV[3] ~= '' then keep_place(2, ARGV[3], ARGV[4], ARGV[5], ARGV[6]) end
return {0, redis.call('PTTL', KEYS[1])}
)lua");
inline constexpr Script kTokenAcquireFair = script_of("token_acquire_fair", kTokenAcquireFairText);

// Owner-checked delete, with no queue to honour (Redlock's release on each master). KEYS[1] lock;
// ARGV[1] the value we wrote; ARGV[2] the release channel ('' for none), where a deletion is
// announced to waiters (sharded pub/sub: the channel is in the lock's slot). 1 deleted; 0 the key
// holds someone else's value or nothing.
inline constexpr Script kCompareAndDelete{"compare_and_delete", R"lua(
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
if ARGV[2] ~= '' then redis.pcall('SPUBLISH', ARGV[2], '') end
return 1
)lua"};

// The start of a release that may hand the lock on (kCompareAndHandOff), ahead
// of kFairPrelude. KEYS[1] lock, KEYS[2] waiter queue, KEYS[4] grant record; ARGV[1] the value we
// wrote, ARGV[2] the release channel ('' for none). Not ours: 0. Nobody queued (the uncontended
// case): nobody to hand the lock to, so it is deleted (with the record of the grant it came from,
// if it did) and the deletion announced to nobody in particular: 1. Otherwise
// the script goes on. It comes before the prelude because Lua builds the prelude's functions on
// every call that reaches them: a quarter of an uncontended release's cost on the server
// (EVALSHA 4.8 us against 3.5 us, Redis 7.0).
inline constexpr char kReleaseUnlessQueued[] = R"lua(
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('DEL', KEYS[1], KEYS[4])
  if ARGV[2] ~= '' then redis.pcall('SPUBLISH', ARGV[2], '') end
  return 1
end
)lua";

// Owner-checked release serving a queue in Redis (docs/design.md §10.4-10.6): token locks in
// every wait mode (fair mode's queue or notify mode's) and hardened legacy locks. KEYS[1] lock,
// KEYS[2] queue, KEYS[3] its times, KEYS[4] grant record, KEYS[5] fence counter; ARGV[1] the value
// we wrote, ARGV[2] the release channel ('' for none), ARGV[3] how the lock is written for a waiter
// that gave no grant spec: 't' its id (a token lock: MultiMutex's waiters, and replica_ack's, which
// claim the key with their queued attempt) or 's' / 'm' (hardened legacy: a stamp in seconds /
// ms), ARGV[4] 'uuid' when legacy values carry an owner UUID (one is made from the waiter's id,
// which no peer owns).
// When the first live waiter starves (always in fair mode; after starvation_after in notify mode),
// the lock is not freed but granted to it (grant()): the key holds its value, so a newcomer's SET
// NX (or a Java peer's SETNX) finds it held and nobody barges past a starving waiter, and the
// message names it and says it holds the lock. A waiter without a spec is granted the key until its
// own deadline, to claim. Otherwise the key is deleted, and the announcement names the first live
// waiter, so that one alone wakes to race newcomers for it (not every waiter: no herd), or names
// nobody ('') when nobody is queued. 2 granted, 1 deleted, 0 the key holds someone else's value or
// nothing.
inline constexpr auto kCompareAndHandOffText = joined(kReleaseUnlessQueued, kFairPrelude, kFencePrelude,
                                                      kGrantPrelude, R"lua(
local head, ttl, starving, spec = next_in_line(2)
if starving then
  if not spec then
    local prefix = ''
    if ARGV[4] == 'uuid' then
      local h = redis.sha1hex(head)
      prefix = h:sub(1, 8) .. '-' .. h:sub(9, 12) .. '-4' .. h:sub(14, 16) .. '-8' .. h:sub(18, 20) .. '-' .. h:sub(21, 32) .. ':'
    elseif ARGV[3] == 't' then
      prefix = head
    end
    spec = string.format('0 %.0f 0 0 %s %s', ttl, ARGV[3], prefix)
  end
  local _, _, message = grant(head, spec, 1, 4, 5)
  if message then
    leave_place(2, head)
    announce(ARGV[2], head, message)
    return 2
  end
end
redis.call('DEL', KEYS[1], KEYS[4])
announce(ARGV[2], head or nil, head or '')
return 1
)lua");
inline constexpr Script kCompareAndHandOff = script_of("compare_and_hand_off", kCompareAndHandOffText);

// Owner-checked extend (token). KEYS[1] lock; ARGV[1] our token, ARGV[2] new lease ms. 1 or 0.
inline constexpr Script kCompareAndPexpire{"compare_and_pexpire", R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
)lua"};

// All-or-nothing acquire of several keys (MultiMutex). KEYS[1..n] the locks, sorted and distinct,
// then the waiter queue and its times (of the first key, n = #KEYS - 2); ARGV[1] token, ARGV[2]
// lease ms, ARGV[3] the waiter id of a queued waiter ('' for an attempt that does not queue),
// ARGV[4] waiter timeout ms, ARGV[5] ms until the waiter starves. Every key is looked at before
// anything is written: a key of another type anywhere is an error (waiting would never end it). A
// key that exists blocks, unless a release handed it to this waiter (it holds the waiter's id:
// kMultiRelease); a queued waiter also waits for a starving waiter queued ahead of it. Blocked: {0, i, pttl} names the
// first blocking key (1-based) and its PTTL ({0, 1, -2} when only the queue blocks), nothing is written but the
// waiter's place in the queue. Otherwise each key is SET to the token with the lease: {1}. Atomic like every script, so
// no other client sees a partial set. Redis Cluster: all keys must be in one slot (CROSSSLOT
// otherwise).
inline constexpr auto kMultiAcquireText = joined(kFairPrelude, R"lua(
local n = #KEYS - 2
local me = ARGV[3]
local blocking
local handed = false
for i = 1, n do
  local t = redis.call('TYPE', KEYS[i])['ok']
  if t ~= 'none' then
    if t ~= 'string' then
      return redis.error_reply('WRONGTYPE lock key KEYS[' .. i .. '] holds a ' .. t .. ', not a string')
    end
    if me ~= '' and redis.call('GET', KEYS[i]) == me then
      handed = true
    elseif not blocking then
      blocking = i
    end
  end
end
local may_take = true
if me ~= '' then
  local bad_queue = queue_error(n + 1)
  if bad_queue then return bad_queue end
  may_take = may_take_free(n + 1, me)
end
if not blocking and (handed or may_take) then
  for i = 1, n do redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2]) end
  if me ~= '' then leave_place(n + 1, me) end
  return {1}
end
if me ~= '' then keep_place(n + 1, me, ARGV[4], ARGV[5]) end
if blocking then return {0, blocking, redis.call('PTTL', KEYS[blocking])} end
return {0, 1, -2}
)lua");
inline constexpr Script kMultiAcquire = script_of("multi_acquire", kMultiAcquireText);

// Owner-checked release of several keys (MultiMutex). KEYS[1..n] the locks, then the waiter
// queue and its times (n = #KEYS - 2); ARGV[1] our token; ARGV[i + 1] the release channel of
// KEYS[i]. Each key still holding the token is released and its release announced; the others
// (gone, someone else's value, another type) are left alone, so a foreign key never stops the
// release of ours. As in kCompareAndHandOff, a starving first waiter is handed every released key
// (set to its id until its deadline) instead of finding them free, and the announcements name the
// first live waiter. Returns {how many keys were released, 1 when they were handed over else 0}.
inline constexpr auto kMultiReleaseText = joined(kFairPrelude, R"lua(
local n = #KEYS - 2
local head, ttl, starving = next_in_line(n + 1)
local released = 0
for i = 1, n do
  if redis.pcall('GET', KEYS[i]) == ARGV[1] then
    if starving then
      redis.call('SET', KEYS[i], head, 'PX', ttl)
    else
      redis.call('DEL', KEYS[i])
    end
    announce(ARGV[i + 1], head or nil, head or '')
    released = released + 1
  end
end
return {released, (starving and released > 0) and 1 or 0}
)lua");
inline constexpr Script kMultiRelease = script_of("multi_release", kMultiReleaseText);

// Hardened legacy acquire, takeover and extend, judged and stamped by the server's clock.
// KEYS[1] lock; mode 'queued' only: KEYS[2] waiter queue, KEYS[3] its times, KEYS[4] the grant
// record. ARGV[1] mode: 'nx' (free key only), 'cas' (only if the value is still ARGV[6]) or
// 'queued' (a waiting waiter: a free key queued_view() allows, or a lock a release granted this
// waiter (kGrantPrelude), found here; otherwise queued); ARGV[2] value prefix ('' or '<uuid>:');
// ARGV[3] unit 'ms' or 's'; ARGV[4] lease ms; ARGV[5] safety TTL ms; ARGV[6] expected value (cas);
// ARGV[7] waiter id, ARGV[8] waiter timeout ms, ARGV[9] ms until the waiter starves, ARGV[10] its
// grant spec (queued).
// The value is the jedis-lock stamp now + lease + 1 ms (seconds rounded up), exactly what
// format_legacy_value() writes, so Java peers read it as a normal lock.
// Returns {1, value, now_ms, -1} when written, {1, value, now_ms, pttl, 'granted'} when a grant was
// found (its lease ends with the stamp or the key's TTL, whichever comes first), {0, current value
// or nil, now_ms, pttl} otherwise.
inline constexpr auto kLegacyHardenedAcquireText = joined(kFairPrelude, kFencePrelude, kGrantPrelude, R"lua(
local stamp = now() + tonumber(ARGV[4]) + 1
if ARGV[3] == 's' then stamp = math.ceil(stamp / 1000) end
local value = ARGV[2] .. string.format('%.0f', stamp)
local written
if ARGV[1] == 'nx' then
  written = redis.call('SET', KEYS[1], value, 'NX', 'PX', ARGV[5])
elseif ARGV[1] == 'cas' then
  if redis.call('GET', KEYS[1]) == ARGV[6] then written = redis.call('SET', KEYS[1], value, 'PX', ARGV[5]) end
else
  local kind, may_take, refused = queued_view(ARGV[7])
  if refused then return refused end
  if kind == 'string' then
    local granted = granted_to(ARGV[7], 1, 4)
    if granted then return {1, granted, now(), redis.call('PTTL', KEYS[1]), 'granted'} end
  elseif may_take then
    written = redis.call('SET', KEYS[1], value, 'NX', 'PX', ARGV[5])
  end
  if written then
    leave_place(2, ARGV[7])
  else
    keep_place(2, ARGV[7], ARGV[8], ARGV[9], ARGV[10])
  end
end
if written then return {1, value, now(), -1} end
return {0, redis.call('GET', KEYS[1]), now(), redis.call('PTTL', KEYS[1])}
)lua");
inline constexpr Script kLegacyHardenedAcquire = script_of("legacy_hardened_acquire", kLegacyHardenedAcquireText);

// ---- redisson: Redisson's RLock scripts, as it sends them (docs/wire-formats.md §4.2-4.4) -----

// KEYS[1] the lock name; ARGV: lease ms, field (<client uuid>:<thread id>). nil = acquired (or
// re-entered); otherwise the holder's PTTL (-1: no TTL).
inline constexpr Script kRedissonLock{"redisson_lock", R"lua(
if (redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
return redis.call('pttl', KEYS[1])
)lua"};

// KEYS: the lock name, its channel; ARGV: the message ("0"), the lease a partial unlock re-arms,
// field, the publish command. The 3.22-3.23 script: no unlock latch key (later versions' latch
// only makes their own retried unlocks idempotent; their latch keys are left alone).
// nil = not held by field; 0 = re-entries remain; 1 = deleted and announced. One change from
// Redisson's text: the announcement is a redis.pcall, so a publish an ACL denies cannot fail an
// unlock whose deletion has already happened.
inline constexpr Script kRedissonUnlock{"redisson_unlock", R"lua(
if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then
  return nil
end
local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if (counter > 0) then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 0
end
redis.call('del', KEYS[1])
redis.pcall(ARGV[4], KEYS[2], ARGV[1])
return 1
)lua"};

// KEYS[1] the lock name; ARGV: lease ms, field. 1 = renewed; 0 = no longer held by field.
inline constexpr Script kRedissonRenew{"redisson_renew", R"lua(
if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then
  redis.call('pexpire', KEYS[1], ARGV[1])
  return 1
end
return 0
)lua"};

// RFencedLock's acquire (RedissonFencedLock.java, tryLockAndGetToken): RLock's, plus an INCR of the
// token counter redisson_lock_token:{K} on every acquisition, re-entries included. KEYS: the lock,
// the counter; ARGV: lease ms, field. {-1, token} = acquired; {pttl, -1} = held by another. The
// counter's INCR comes first and fails on a value that is no integer, so nothing is written then;
// a string at the lock name fails the HEXISTS before it.
inline constexpr Script kRedissonFencedLock{"redisson_fenced_lock", R"lua(
if (redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then
  local token = redis.call('incr', KEYS[2])
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return {-1, token}
end
return {redis.call('pttl', KEYS[1]), -1}
)lua"};

// ---- redisson fair mode: RFairLock (RedissonFairLock.java at redisson-4.7.0; docs/design.md §4.4b) --
//
// type_error(found, wants): the WRONGTYPE error reply for the first KEYS[i] whose type found[i] is
// neither 'none' nor wants[i], or nil. Shared by the fair lock's scripts, whose keys sit at
// different places.
inline constexpr char kTypeErrorPrelude[] = R"lua(
local function type_error(found, wants)
  for i = 1, #wants do
    if found[i] ~= 'none' and found[i] ~= wants[i] then
      return redis.error_reply('WRONGTYPE KEYS[' .. i .. '] holds a ' .. found[i] .. ', not a ' .. wants[i])
    end
  end
end
)lua";

// KEYS[1] the lock (Redisson's hash), KEYS[2] its queue redisson_lock_queue:{K} (a list of fields,
// first come first served), KEYS[3] the deadlines redisson_lock_timeout:{K} (a sorted set: field ->
// the epoch ms by which that waiter must have asked again, by the clients' clocks, as Java counts).
// fair_types() checks the three keys' types before anything is written (nil when fine);
// evict_stale(now) drops queue heads whose deadline has passed, as every Redisson fair script
// does first; take_or_reenter(field, lease, wait) takes a free lock for `field` when nobody is
// queued or it is first (leaving the queue, and taking `wait` off every deadline behind it, as the
// chain of waits is one shorter), or re-enters its own hold, and says whether it did.
// Needs type_error() (kTypeErrorPrelude).
inline constexpr char kRedissonFairPrelude[] = R"lua(
local function fair_types()
  local found = {redis.call('TYPE', KEYS[1])['ok'], redis.call('TYPE', KEYS[2])['ok'], redis.call('TYPE', KEYS[3])['ok']}
  return type_error(found, {'hash', 'list', 'zset'})
end
local function evict_stale(now)
  while true do
    local head = redis.call('lindex', KEYS[2], 0)
    if head == false then return end
    local deadline = redis.call('zscore', KEYS[3], head)
    if deadline == false or tonumber(deadline) > tonumber(now) then return end
    redis.call('zrem', KEYS[3], head)
    redis.call('lpop', KEYS[2])
  end
end
local function take_or_reenter(field, lease, wait)
  if redis.call('exists', KEYS[1]) == 0
      and (redis.call('exists', KEYS[2]) == 0 or redis.call('lindex', KEYS[2], 0) == field) then
    redis.call('lpop', KEYS[2])
    redis.call('zrem', KEYS[3], field)
    local behind = redis.call('zrange', KEYS[3], 0, -1)
    for i = 1, #behind do redis.call('zincrby', KEYS[3], -tonumber(wait), behind[i]) end
    redis.call('hset', KEYS[1], field, 1)
    redis.call('pexpire', KEYS[1], lease)
    return true
  end
  if redis.call('hexists', KEYS[1], field) == 1 then
    redis.call('hincrby', KEYS[1], field, 1)
    redis.call('pexpire', KEYS[1], lease)
    return true
  end
  return false
end
)lua";

// An attempt: tryLockInnerAsync's two forms in one. ARGV: lease ms, field, wait ms (the "thread
// wait time", RedissonOptions::fair_wait), now (the client's epoch ms), '1' to queue (lock() and
// tryLock(wait), EVAL_LONG) or '' for a single try that never queues (tryLock(), EVAL_NULL_BOOLEAN).
// nil = acquired or re-entered. Otherwise the ms to wait: queued before, the lock's PTTL, or with
// the lock free and another waiter first, the ms until that waiter's deadline (when it is passed
// over unless it has taken the lock; its release's message comes sooner), -1 when unknown (Java's
// script answers 0 there, and its waiters ask again at once, over and over); queued now,
// Redisson's estimate (the last waiter's deadline - now, or the lock's PTTL when nobody is queued
// with a deadline), and its own deadline is that + wait + now; a single try, the lock's PTTL.
inline constexpr auto kRedissonFairLockText = joined(kTypeErrorPrelude, kRedissonFairPrelude, R"lua(
local refused = fair_types()
if refused then return refused end
evict_stale(ARGV[4])
if take_or_reenter(ARGV[2], ARGV[1], ARGV[3]) then return nil end
if ARGV[5] ~= '1' then return redis.call('pttl', KEYS[1]) end
if redis.call('zscore', KEYS[3], ARGV[2]) ~= false then
  local pttl = redis.call('pttl', KEYS[1])
  if pttl >= 0 then return pttl end
  local first = redis.call('lindex', KEYS[2], 0)
  local first_deadline = first and redis.call('zscore', KEYS[3], first)
  if first_deadline then return math.max(1, tonumber(first_deadline) - tonumber(ARGV[4])) end
  return -1
end
local last = redis.call('lindex', KEYS[2], -1)
local last_deadline = last ~= false and last ~= ARGV[2] and redis.call('zscore', KEYS[3], last)
local ttl
if last_deadline then
  ttl = tonumber(last_deadline) - tonumber(ARGV[4])
else
  ttl = redis.call('pttl', KEYS[1])
end
if redis.call('zadd', KEYS[3], ttl + tonumber(ARGV[3]) + tonumber(ARGV[4]), ARGV[2]) == 1 then
  redis.call('rpush', KEYS[2], ARGV[2])
end
return ttl
)lua");
inline constexpr Script kRedissonFairLock = script_of("redisson_fair_lock", kRedissonFairLockText);

// unlockInnerAsync. KEYS[4] the lock's channel redisson_lock__channel:{K}; ARGV: the message ("0"),
// the lease a partial unlock re-arms, field, now (the client's epoch ms), the publish command. The
// first live waiter is told on its own channel, KEYS[4] .. ':' .. its field, never on KEYS[4]
// itself. nil = not held by field (someone else holds it); 0 = re-entries remain; 1 = deleted and
// the first waiter told; 2 = the lock was gone (its lease ran out): the first waiter is told all
// the same, as Redisson does, since nothing else would. Redisson's unlock latch key (which only
// makes its own retried unlocks idempotent) is not kept, and the publish is a redis.pcall, so a
// publish an ACL denies cannot fail an unlock whose deletion has already happened.
inline constexpr auto kRedissonFairUnlockText = joined(kTypeErrorPrelude, kRedissonFairPrelude, R"lua(
local refused = fair_types()
if refused then return refused end
evict_stale(ARGV[4])
local function tell_first()
  local first = redis.call('lindex', KEYS[2], 0)
  if first ~= false then redis.pcall(ARGV[5], KEYS[4] .. ':' .. first, ARGV[1]) end
end
if redis.call('exists', KEYS[1]) == 0 then
  tell_first()
  return 2
end
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then return nil end
if redis.call('hincrby', KEYS[1], ARGV[3], -1) > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 0
end
redis.call('del', KEYS[1])
tell_first()
return 1
)lua");
inline constexpr Script kRedissonFairUnlock = script_of("redisson_fair_unlock", kRedissonFairUnlockText);

// acquireFailedAsync: a waiter that gives up leaves the queue, and every waiter behind it has
// `wait` taken off its deadline (the chain of waits is one shorter). One addition to Redisson's:
// a first waiter that leaves a free lock (it may have been told and not have come) tells the next
// one, on its channel, as a release would; Java waiters take that "0" as any other. KEYS: the
// queue, the deadlines, the lock; ARGV: field, wait ms, the lock's channel, the publish command.
// Always nil.
inline constexpr auto kRedissonFairLeaveText = joined(kTypeErrorPrelude, R"lua(
local refused = type_error({redis.call('TYPE', KEYS[1])['ok'], redis.call('TYPE', KEYS[2])['ok']}, {'list', 'zset'})
if refused then return refused end
local queue = redis.call('lrange', KEYS[1], 0, -1)
local i = 1
while i <= #queue and queue[i] ~= ARGV[1] do i = i + 1 end
for behind = i + 1, #queue do redis.call('zincrby', KEYS[2], -tonumber(ARGV[2]), queue[behind]) end
redis.call('zrem', KEYS[2], ARGV[1])
redis.call('lrem', KEYS[1], 0, ARGV[1])
if i == 1 and queue[2] and redis.call('exists', KEYS[3]) == 0 then
  redis.pcall(ARGV[4], ARGV[3] .. ':' .. queue[2], '0')
end
)lua");
inline constexpr Script kRedissonFairLeave = script_of("redisson_fair_leave", kRedissonFairLeaveText);

// ---- redisson read/write lock: RReadWriteLock (RedissonReadLock.java, RedissonWriteLock.java at
// redisson-4.7.0; docs/design.md §4.4d) ------------------------------------------------------------
//
// The lock K is a hash: 'mode' = 'read' or 'write', reader fields <uuid>:<n> -> count, the writer's
// field <uuid>:<n>:write -> count. Each reader hold i has a key {K}:<field>:rwlock_timeout:<i> (a
// string "1" with the reader's lease), by which unlocks tell live readers from dead ones. The
// scripts are Redisson's with these changes: the unlock latch is not kept (it only makes
// Redisson's own retried unlocks idempotent), the publish is a redis.pcall (an ACL that denies it
// cannot fail an unlock already done), an acquire refuses a hash without a 'mode' (another
// object's, such as an RLock held at the same name) instead of writing into it, and the renewals
// never cut the lock's TTL below what a holder's other hold needs (below).
//
// not_rwlock(mode): the error reply for a hash at KEYS[1] that has no 'mode', or nil.
inline constexpr char kRwPrelude[] = R"lua(
local function not_rwlock(mode)
  if mode == false and redis.call('exists', KEYS[1]) == 1 then
    return redis.error_reply('WRONGTYPE KEYS[1] is a hash without a mode field: not a read/write lock')
  end
end
)lua";

// Read acquire. KEYS: the lock, the timeout prefix {K}:<field>:rwlock_timeout; ARGV: lease ms,
// field, the same holder's writer field (a writer may also read: a downgrade). nil = acquired;
// otherwise the lock's PTTL.
inline constexpr auto kRedissonReadLockText = joined(kRwPrelude, R"lua(
local mode = redis.call('hget', KEYS[1], 'mode')
local refused = not_rwlock(mode)
if refused then return refused end
if mode == false then
  redis.call('hset', KEYS[1], 'mode', 'read')
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('set', KEYS[2] .. ':1', 1)
  redis.call('pexpire', KEYS[2] .. ':1', ARGV[1])
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if (mode == 'read') or (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 1) then
  local ind = redis.call('hincrby', KEYS[1], ARGV[2], 1)
  local key = KEYS[2] .. ':' .. ind
  redis.call('set', key, 1)
  redis.call('pexpire', key, ARGV[1])
  redis.call('pexpire', KEYS[1], math.max(redis.call('pttl', KEYS[1]), ARGV[1]))
  return nil
end
return redis.call('pttl', KEYS[1])
)lua");
inline constexpr Script kRedissonReadLock = script_of("redisson_read_lock", kRedissonReadLockText);

// Read unlock. KEYS: the lock, its channel redisson_rwlock:{K}, the timeout prefix, the key
// prefix ({K}); ARGV: the message ("0"), field, the publish command. nil = not held by field;
// 0 = others still hold (the lock's TTL is the longest live reader's), 1 = deleted and announced:
// no live reader is left (readers whose timeout keys are gone count as dead), as Redisson decides.
inline constexpr Script kRedissonReadUnlock{"redisson_read_unlock", R"lua(
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  redis.pcall(ARGV[3], KEYS[2], ARGV[1])
  return nil
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then return nil end
local counter = redis.call('hincrby', KEYS[1], ARGV[2], -1)
if counter == 0 then redis.call('hdel', KEYS[1], ARGV[2]) end
redis.call('del', KEYS[3] .. ':' .. (counter + 1))
if redis.call('hlen', KEYS[1]) > 1 then
  local max_remaining = -3
  for _, field in ipairs(redis.call('hkeys', KEYS[1])) do
    local count = tonumber(redis.call('hget', KEYS[1], field))
    if type(count) == 'number' then
      for i = count, 1, -1 do
        max_remaining = math.max(redis.call('pttl', KEYS[4] .. ':' .. field .. ':rwlock_timeout:' .. i), max_remaining)
      end
    end
  end
  if max_remaining > 0 then
    redis.call('pexpire', KEYS[1], max_remaining)
    return 0
  end
  if mode == 'write' then return 0 end
end
redis.call('del', KEYS[1])
redis.pcall(ARGV[3], KEYS[2], ARGV[1])
return 1
)lua"};

// A reader's renewal (ReadLockTask at 3.44+, for one lock): its own timeout keys and the lock,
// never another reader's keys. KEYS: the lock, the key prefix; ARGV: lease ms, field. 1 = renewed,
// 0 = no longer held by field. Two changes: the lock's TTL is never shortened (Redisson sets it to
// the lease, which cuts a longer-leased reader's hash short when leases differ), and a timeout key
// that is gone while the field is still there (evicted) is written again rather than left to make
// the next unlock count a live reader as dead. That is safe: while the field is in the hash, no
// writer can have entered.
inline constexpr Script kRedissonReadRenew{"redisson_read_renew", R"lua(
local counter = redis.call('hget', KEYS[1], ARGV[2])
if counter == false then return 0 end
for c = tonumber(counter), 1, -1 do
  redis.call('set', KEYS[2] .. ':' .. ARGV[2] .. ':rwlock_timeout:' .. c, 1, 'px', ARGV[1])
end
redis.call('pexpire', KEYS[1], math.max(redis.call('pttl', KEYS[1]), ARGV[1]))
return 1
)lua"};

// A writer's renewal: RLock's, except that while the same holder also reads (a downgrade in
// progress) the lock's TTL is never shortened, as a reader's renewal never shortens it: the
// watchdog's last renewal before MutexOptions::watchdog.max_hold asks for less than the lease, and
// would cut the holder's own read hold short. KEYS[1] the lock; ARGV: lease ms, the writer field,
// the holder's reader field. 1 = renewed, 0 = no longer held by the writer field.
inline constexpr Script kRedissonWriteRenew{"redisson_write_renew", R"lua(
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then return 0 end
local lease = tonumber(ARGV[1])
if redis.call('hexists', KEYS[1], ARGV[3]) == 1 then lease = math.max(redis.call('pttl', KEYS[1]), lease) end
redis.call('pexpire', KEYS[1], lease)
return 1
)lua"};

// Write acquire. KEYS[1] the lock; ARGV: lease ms, the writer field. nil = acquired (or
// re-entered: the TTL grows by the lease, as Redisson's does); otherwise the lock's PTTL.
inline constexpr auto kRedissonWriteLockText = joined(kRwPrelude, R"lua(
local mode = redis.call('hget', KEYS[1], 'mode')
local refused = not_rwlock(mode)
if refused then return refused end
if mode == false then
  redis.call('hset', KEYS[1], 'mode', 'write')
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], redis.call('pttl', KEYS[1]) + ARGV[1])
  return nil
end
return redis.call('pttl', KEYS[1])
)lua");
inline constexpr Script kRedissonWriteLock = script_of("redisson_write_lock", kRedissonWriteLockText);

// Write unlock. KEYS: the lock, its channel; ARGV: the message ("1": every waiter of every peer
// wakes), the lease a partial unlock re-arms, the writer field, the publish command. nil = not
// held by field; 0 = re-entries remain; 1 = released: deleted and announced, or, when the same
// holder still reads (a downgrade), left in read mode without a message, as Redisson does.
inline constexpr Script kRedissonWriteUnlock{"redisson_write_unlock", R"lua(
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  redis.pcall(ARGV[4], KEYS[2], ARGV[1])
  return nil
end
if mode ~= 'write' or redis.call('hexists', KEYS[1], ARGV[3]) == 0 then return nil end
if redis.call('hincrby', KEYS[1], ARGV[3], -1) > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 0
end
redis.call('hdel', KEYS[1], ARGV[3])
if redis.call('hlen', KEYS[1]) == 1 then
  redis.call('del', KEYS[1])
  redis.pcall(ARGV[4], KEYS[2], ARGV[1])
else
  redis.call('hset', KEYS[1], 'mode', 'read')
end
return 1
)lua"};

// ---- redisson counters: RCountDownLatch and RSemaphore (RedissonCountDownLatch.java,
// RedissonSemaphore.java at redisson-4.7.0; docs/design.md §4.4e) --------------------------------
//
// The state is a string holding an integer at K; its announcements go to a channel passed as KEYS[2],
// as Redisson passes it. Changes from Redisson's text, none visible to a Java peer: a value that is
// no integer is refused before anything is written (Redisson's Lua would fail halfway or compare
// garbage), and publishes are redis.pcall (an ACL that denies them cannot fail a change already
// made).
//
// not_integer(value): the error reply for a value at KEYS[1] that is no integer, or nil.
// beyond_int(value, n): the error reply when value + n leaves a Java int, which the Java peers
// read permits into (and Lua's doubles would compare wrongly far beyond it), or nil.
inline constexpr char kCounterPrelude[] = R"lua(
local function not_integer(value)
  if value ~= false and not string.match(value, '^%-?%d+$') then
    return redis.error_reply('ERR KEYS[1] is not an integer')
  end
end
local function beyond_int(value, n)
  local after = tonumber(value or 0) + tonumber(n)
  if after > 2147483647 or after < -2147483648 then
    return redis.error_reply('ERR KEYS[1] would overflow a Java int')
  end
end
)lua";

// countDown. KEYS: the latch, its channel redisson_countdownlatch__channel__{K}; ARGV: the message
// ("0"), the publish command. The count left: 0 opened it (deleted and announced), below 0 it was
// open already (deleted, as Redisson does, silently).
inline constexpr auto kRedissonLatchCountDownText = joined(kCounterPrelude, R"lua(
local refused = not_integer(redis.call('get', KEYS[1]))
if refused then return refused end
local v = redis.call('decr', KEYS[1])
if v <= 0 then redis.call('del', KEYS[1]) end
if v == 0 then redis.pcall(ARGV[2], KEYS[2], ARGV[1]) end
return v
)lua");
inline constexpr Script kRedissonLatchCountDown = script_of("redisson_latch_count_down", kRedissonLatchCountDownText);

// trySetCount and trySetPermits: the count or the permits set only when none is. KEYS: the key,
// its channel; ARGV: the value, the message (the latch's "1", NEW_COUNT; the semaphore's, the
// permits), the publish command. 1 = set, 0 = a value was there already.
inline constexpr auto kRedissonTrySetText = joined(kTypeErrorPrelude, R"lua(
local refused = type_error({redis.call('TYPE', KEYS[1])['ok']}, {'string'})
if refused then return refused end
if redis.call('exists', KEYS[1]) == 1 then return 0 end
redis.call('set', KEYS[1], ARGV[1])
redis.pcall(ARGV[3], KEYS[2], ARGV[2])
return 1
)lua");
inline constexpr Script kRedissonTrySet = script_of("redisson_try_set", kRedissonTrySetText);

// tryAcquire(n). KEYS[1] the permits; ARGV: n. 1 = taken, 0 = fewer available (or none set).
inline constexpr auto kRedissonSemaphoreAcquireText = joined(kCounterPrelude, R"lua(
local value = redis.call('get', KEYS[1])
local refused = not_integer(value)
if refused then return refused end
if value ~= false and tonumber(value) >= tonumber(ARGV[1]) then
  redis.call('decrby', KEYS[1], ARGV[1])
  return 1
end
return 0
)lua");
inline constexpr Script kRedissonSemaphoreAcquire = script_of("redisson_semaphore_acquire", kRedissonSemaphoreAcquireText);

// release(n) (n > 0) and addPermits(n) (any n): the permits after the change, announced as the
// message when positive (a Java waiter's listener throws on a negative count, and 0 wakes nobody).
// KEYS: the permits, the channel redisson_sc:{K}; ARGV: n, the publish command.
inline constexpr auto kRedissonSemaphoreAddText = joined(kCounterPrelude, R"lua(
local before = redis.call('get', KEYS[1])
local refused = not_integer(before) or beyond_int(before, ARGV[1])
if refused then return refused end
local value = redis.call('incrby', KEYS[1], ARGV[1])
if value > 0 then redis.pcall(ARGV[2], KEYS[2], value) end
return value
)lua");
inline constexpr Script kRedissonSemaphoreAdd = script_of("redisson_semaphore_add", kRedissonSemaphoreAddText);

// drainPermits. KEYS[1] the permits. What was available, now 0 (nothing set: 0, and still nothing).
inline constexpr auto kRedissonSemaphoreDrainText = joined(kCounterPrelude, R"lua(
local value = redis.call('get', KEYS[1])
local refused = not_integer(value)
if refused then return refused end
if value == false then return 0 end
redis.call('set', KEYS[1], 0)
return tonumber(value)
)lua");
inline constexpr Script kRedissonSemaphoreDrain = script_of("redisson_semaphore_drain", kRedissonSemaphoreDrainText);

// ---- redisson permit-expirable semaphore: RPermitExpirableSemaphore
// (RedissonPermitExpirableSemaphore.java at redisson-4.7.0; docs/design.md §4.4f) ----------------
//
// KEYS, in every script here: the permits available (a string, as RSemaphore's), the leases
// {K}:timeout (a sorted set: permit id -> the epoch ms its lease ends, by the client's clock, or
// 922337203685477 for a permit without one), the channel redisson_sc:{K}. Redisson orders them
// differently per script; these are lockbridge's own scripts, equal in effect. Every one first
// gives back the permits whose lease has ended (reclaim), announcing the new count, as Redisson's
// do: nobody announces a lease's end when it happens.
//
// leased_error(): the error reply for keys of the wrong type or a count that is no integer, or nil.
// reclaim(now, most, publish): gives back up to `most` (-1: all) permits whose lease ended by `now`.
// Needs type_error() (kTypeErrorPrelude) and not_integer() (kCounterPrelude).
inline constexpr char kLeasedPrelude[] = R"lua(
local function leased_error()
  local refused = type_error({redis.call('TYPE', KEYS[1])['ok'], redis.call('TYPE', KEYS[2])['ok']}, {'string', 'zset'})
  if refused then return refused end
  return not_integer(redis.call('get', KEYS[1]))
end
local function reclaim(now, most, publish)
  local expired = redis.call('zrangebyscore', KEYS[2], 0, now, 'limit', 0, most)
  if #expired > 0 then
    -- In slices: Lua's unpack refuses about 8,000 values, and ended leases may be more.
    for first = 1, #expired, 1000 do
      redis.call('zrem', KEYS[2], unpack(expired, first, math.min(first + 999, #expired)))
    end
    local value = redis.call('incrby', KEYS[1], #expired)
    if value > 0 then redis.pcall(publish, KEYS[3], value) end
  end
end
)lua";

// tryAcquire(n, lease). ARGV: n, the leases' end (epoch ms), now, the no-lease score, the publish
// command, then n permit ids. {1} = taken; {0, the earliest lease end} when a permit's lease will
// end (Java sleeps until then), {0, -1} when none will.
inline constexpr auto kLeasedAcquireText = joined(kTypeErrorPrelude, kCounterPrelude, kLeasedPrelude, R"lua(
local refused = leased_error()
if refused then return refused end
reclaim(ARGV[3], ARGV[1], ARGV[5])
local value = redis.call('get', KEYS[1])
if value ~= false and tonumber(value) >= tonumber(ARGV[1]) then
  redis.call('decrby', KEYS[1], ARGV[1])
  for i = 6, #ARGV do redis.call('zadd', KEYS[2], ARGV[2], ARGV[i]) end
  local ttl = redis.call('pttl', KEYS[1])
  if ttl > 0 then redis.call('pexpire', KEYS[2], ttl) end
  return {1}
end
local first = redis.call('zrange', KEYS[2], 0, 0, 'WITHSCORES')
if first[1] ~= nil and first[2] ~= ARGV[4] then return {0, tonumber(first[2])} end
return {0, -1}
)lua");
inline constexpr Script kLeasedAcquire = script_of("leased_semaphore_acquire", kLeasedAcquireText);

// tryRelease(id). ARGV: the id, now, the publish command. 1 = given back within its lease; 0 =
// unknown id, or its lease had ended (then it is given back all the same, as Redisson does).
inline constexpr auto kLeasedReleaseText = joined(kTypeErrorPrelude, kCounterPrelude, kLeasedPrelude, R"lua(
local refused = leased_error()
if refused then return refused end
local ends = redis.call('zscore', KEYS[2], ARGV[1])
if redis.call('zrem', KEYS[2], ARGV[1]) ~= 1 then return 0 end
redis.pcall(ARGV[3], KEYS[3], redis.call('incrby', KEYS[1], 1))
if tonumber(ends) <= tonumber(ARGV[2]) then return 0 end
return 1
)lua");
inline constexpr Script kLeasedRelease = script_of("leased_semaphore_release", kLeasedReleaseText);

// tryRelease(ids), all or none, as Redisson >= 3.41.0 gives back a list. ARGV: now, the publish
// command, then the ids. The number given back (every id), or 0 when any id holds no permit
// within its lease: then none is given back, and nothing else is written. Like Java, it announces
// the number given back, not the permits available.
inline constexpr auto kLeasedReleaseManyText = joined(kTypeErrorPrelude, kCounterPrelude, kLeasedPrelude, R"lua(
local refused = leased_error()
if refused then return refused end
for i = 3, #ARGV do
  local ends = redis.call('zscore', KEYS[2], ARGV[i])
  if ends == false or tonumber(ends) <= tonumber(ARGV[1]) then return 0 end
end
reclaim(ARGV[1], -1, ARGV[2])
local removed = redis.call('zrem', KEYS[2], unpack(ARGV, 3))
redis.call('incrby', KEYS[1], removed)
redis.pcall(ARGV[2], KEYS[3], removed)
return removed
)lua");
inline constexpr Script kLeasedReleaseMany = script_of("leased_semaphore_release_many", kLeasedReleaseManyText);

// updateLeaseTime(id, lease). ARGV: the id, the lease's new end, now, the publish command. 1 =
// updated; 0 = the id holds no permit (never, released, or its lease ended).
inline constexpr auto kLeasedRenewText = joined(kTypeErrorPrelude, kCounterPrelude, kLeasedPrelude, R"lua(
local refused = leased_error()
if refused then return refused end
reclaim(ARGV[3], -1, ARGV[4])
if redis.call('zscore', KEYS[2], ARGV[1]) == false then return 0 end
redis.call('zadd', KEYS[2], ARGV[2], ARGV[1])
return 1
)lua");
inline constexpr Script kLeasedRenew = script_of("leased_semaphore_renew", kLeasedRenewText);

// availablePermits. ARGV: now, the publish command. The permits available.
inline constexpr auto kLeasedAvailableText = joined(kTypeErrorPrelude, kCounterPrelude, kLeasedPrelude, R"lua(
local refused = leased_error()
if refused then return refused end
reclaim(ARGV[1], -1, ARGV[2])
return tonumber(redis.call('get', KEYS[1]) or 0)
)lua");
inline constexpr Script kLeasedAvailable = script_of("leased_semaphore_available", kLeasedAvailableText);

// trySetPermits(n). ARGV: n, the publish command. 1 = set (none were), 0 = set already.
inline constexpr auto kLeasedTrySetText = joined(kTypeErrorPrelude, kCounterPrelude, kLeasedPrelude, R"lua(
local refused = leased_error()
if refused then return refused end
if redis.call('exists', KEYS[1]) == 1 then return 0 end
redis.call('set', KEYS[1], ARGV[1])
redis.pcall(ARGV[2], KEYS[3], ARGV[1])
return 1
)lua");
inline constexpr Script kLeasedTrySet = script_of("leased_semaphore_try_set", kLeasedTrySetText);

// addPermits(n). ARGV: n, the publish command. The permits available after; n itself is
// announced when positive, as Redisson's permit-expirable semaphore does (its RSemaphore announces
// the new count).
inline constexpr auto kLeasedAddText = joined(kTypeErrorPrelude, kCounterPrelude, kLeasedPrelude, R"lua(
local refused = leased_error() or beyond_int(redis.call('get', KEYS[1]), ARGV[1])
if refused then return refused end
local value = redis.call('incrby', KEYS[1], ARGV[1])
if tonumber(ARGV[1]) > 0 then redis.pcall(ARGV[2], KEYS[3], ARGV[1]) end
return value
)lua");
inline constexpr Script kLeasedAdd = script_of("leased_semaphore_add", kLeasedAddText);

// Every script above, for whoever must name them all (tests that preload a server's script cache).
inline constexpr std::array<const Script*, 33> kEveryScript{
    &kTokenAcquire,      &kTokenAcquireFair,   &kCompareAndDelete,  &kCompareAndHandOff,  &kCompareAndPexpire,
    &kMultiAcquire,      &kMultiRelease,       &kLegacyHardenedAcquire, &kRedissonLock,   &kRedissonUnlock,
    &kRedissonRenew,     &kRedissonFencedLock, &kRedissonFairLock,  &kRedissonFairUnlock, &kRedissonFairLeave,
    &kRedissonReadLock,  &kRedissonReadUnlock, &kRedissonReadRenew, &kRedissonWriteLock,  &kRedissonWriteUnlock,
    &kRedissonLatchCountDown, &kRedissonTrySet, &kRedissonSemaphoreAcquire, &kRedissonSemaphoreAdd,
    &kRedissonSemaphoreDrain, &kLeasedAcquire, &kLeasedRelease, &kLeasedRenew,
    &kLeasedAvailable,   &kLeasedAdd,          &kRedissonWriteRenew, &kLeasedTrySet,       &kLeasedReleaseMany};

}  // namespace lockbridge::detail
