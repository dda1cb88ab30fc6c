// convert's two Lua scripts. Each acts on one key and writes only when the key is still exactly
// what convert read (or wrote), so it is safe to run while lockers work on the same keys. The
// library's own scripts are in lib/src/strategies/scripts.hpp; these belong to the tool alone.
#pragma once

#include <string_view>

namespace lockbridge::tools::convert {

// KEYS[1] the key. ARGV: [1] the value read, [2] its PEXPIRETIME as read (-1: no TTL),
// [3] the action (to_token, to_legacy, delete), [4] the new value, [5] to_token: the PXAT.
// Returns 'written', 'deleted', 'changed' (not what was read: nothing written) or 'stale' (the
// lease ran out since the read: nothing written).
inline constexpr std::string_view kConvertKey = R"lua(
if redis.call('TYPE', KEYS[1]).ok ~= 'string' or redis.call('GET', KEYS[1]) ~= ARGV[1]
   or redis.call('PEXPIRETIME', KEYS[1]) ~= tonumber(ARGV[2]) then
  return 'changed'
end
if ARGV[3] == 'delete' then
  redis.call('DEL', KEYS[1])
  return 'deleted'
end
if ARGV[3] == 'to_legacy' then
  redis.call('SET', KEYS[1], ARGV[4], 'KEEPTTL')
  return 'written'
end
local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if tonumber(ARGV[5]) <= now_ms then return 'stale' end
redis.call('SET', KEYS[1], ARGV[4], 'PXAT', ARGV[5])
return 'written'
)lua";

// KEYS[1] the key. ARGV: [1] the value convert wrote, [2] the value it replaced, [3] that value's
// PEXPIRETIME (-1: no TTL). Restores the old value and TTL if the key still holds what convert
// wrote. Returns 'restored', 'not_restored' (it holds something else: left alone) or 'expired'
// (the old lease has ended since: the key is removed, as the old lock would have been by now).
// Convert's deletes are never undone (rollback() in converter.cpp): it deletes only stamps whose
// lease had already ended.
inline constexpr std::string_view kRollbackKey = R"lua(
if redis.call('TYPE', KEYS[1]).ok ~= 'string' or redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 'not_restored'
end
local old_at = tonumber(ARGV[3])
if old_at < 0 then
  redis.call('SET', KEYS[1], ARGV[2])
  return 'restored'
end
local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if old_at <= now_ms then
  redis.call('DEL', KEYS[1])
  return 'expired'
end
redis.call('SET', KEYS[1], ARGV[2], 'PXAT', ARGV[3])
return 'restored'
)lua";

}  // namespace lockbridge::tools::convert
