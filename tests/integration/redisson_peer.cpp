#include "redisson_peer.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>

namespace lockbridge::testing {

std::string redisson_channel(std::string_view key) { return "redisson_lock__channel:{" + std::string(key) + "}"; }

std::vector<std::string> redisson_lock_command(std::string_view key, std::string_view field,
                                               std::string_view lease_ms) {
  return {"EVAL",
          "if (redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then "
          "redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; "
          "return redis.call('pttl', KEYS[1]);",
          "1",
          std::string(key),
          std::string(lease_ms),
          std::string(field)};
}

std::vector<std::string> redisson_unlock_command(std::string_view key, std::string_view field,
                                                 std::string_view publish) {
  return {"EVAL",
          "if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then return nil; end; "
          "local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); "
          "if (counter > 0) then redis.call('pexpire', KEYS[1], ARGV[2]); return 0; "
          "else redis.call('del', KEYS[1]); redis.call(ARGV[4], KEYS[2], ARGV[1]); return 1; end;",
          "2",
          std::string(key),
          redisson_channel(key),
          "0",
          "30000",
          std::string(field),
          std::string(publish)};
}

std::vector<std::string> redisson_fenced_lock_command(std::string_view key, std::string_view field,
                                                      std::string_view lease_ms) {
  return {"EVAL",
          "if (redis.call('exists', KEYS[1]) == 0 or (redis.call('hexists', KEYS[1], ARGV[2]) == 1)) then local token "
          "= redis.call('incr', KEYS[2]);redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], "
          "ARGV[1]); return {-1, token}; end; return {redis.call('pttl', KEYS[1]), -1};",
          "2",
          std::string(key),
          redisson_token_counter(key),
          std::string(lease_ms),
          std::string(field)};
}

std::string redisson_token_counter(std::string_view key) { return "redisson_lock_token:{" + std::string(key) + "}"; }

std::string redisson_fair_queue(std::string_view key) { return "redisson_lock_queue:{" + std::string(key) + "}"; }
std::string redisson_fair_deadlines(std::string_view key) {
  return "redisson_lock_timeout:{" + std::string(key) + "}";
}
std::string redisson_fair_channel(std::string_view key, std::string_view field) {
  return redisson_channel(key) + ":" + std::string(field);
}

std::string java_now_ms() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
}

// tryLockInnerAsync, EVAL_LONG: KEYS [K, queue, timeouts], ARGV [lease, field, wait, now].
std::vector<std::string> redisson_fair_lock_command(std::string_view key, std::string_view field,
                                                    std::string_view wait_ms, std::string_view lease_ms) {
  return {"EVAL",
          "while true do local firstThreadId2 = redis.call('lindex', KEYS[2], 0);if firstThreadId2 == false then "
          "break;end;local timeout = redis.call('zscore', KEYS[3], firstThreadId2);if timeout ~= false and "
          "tonumber(timeout) <= tonumber(ARGV[4]) then redis.call('zrem', KEYS[3], firstThreadId2);redis.call('lpop', "
          "KEYS[2]);else break;end;end;if (redis.call('exists', KEYS[1]) == 0) and ((redis.call('exists', KEYS[2]) == "
          "0) or (redis.call('lindex', KEYS[2], 0) == ARGV[2])) then redis.call('lpop', KEYS[2]);redis.call('zrem', "
          "KEYS[3], ARGV[2]);local keys = redis.call('zrange', KEYS[3], 0, -1);for i = 1, #keys, 1 do "
          "redis.call('zincrby', KEYS[3], -tonumber(ARGV[3]), keys[i]);end;redis.call('hset', KEYS[1], ARGV[2], "
          "1);redis.call('pexpire', KEYS[1], ARGV[1]);return nil;end;if redis.call('hexists', KEYS[1], ARGV[2]) == 1 "
          "then redis.call('hincrby', KEYS[1], ARGV[2],1);redis.call('pexpire', KEYS[1], ARGV[1]);return nil;end;local "
          "timeout = redis.call('zscore', KEYS[3], ARGV[2]);if timeout ~= false then local ttl = redis.call('pttl', "
          "KEYS[1]);return math.max(0, ttl); end;local lastThreadId = redis.call('lindex', KEYS[2], -1);local "
          "ttl;if lastThreadId ~= false and lastThreadId ~= ARGV[2] and redis.call('zscore', KEYS[3], lastThreadId) "
          "~= false then ttl = tonumber(redis.call('zscore', KEYS[3], lastThreadId)) - tonumber(ARGV[4]);else ttl = "
          "redis.call('pttl', KEYS[1]);end;local timeout = ttl + tonumber(ARGV[3]) + tonumber(ARGV[4]);if "
          "redis.call('zadd', KEYS[3], timeout, ARGV[2]) == 1 then redis.call('rpush', KEYS[2], ARGV[2]);end;return ttl;",
          "3",
          std::string(key),
          redisson_fair_queue(key),
          redisson_fair_deadlines(key),
          std::string(lease_ms),
          std::string(field),
          std::string(wait_ms),
          java_now_ms()};
}

namespace {
// The unlock latch of a new unlock request, redisson_unlock_latch:{key}:<request id>: Redisson draws
// an id per unlock (32 hex digits), and an unlock that finds its latch returns what the latch says
// without running again.
std::string new_unlock_latch(std::string_view key) {
  static std::atomic<unsigned> next{0};
  char id[33];
  std::snprintf(id, sizeof id, "%016llx%016x", static_cast<unsigned long long>(getpid()), next++);
  return "redisson_unlock_latch:{" + std::string(key) + "}:" + id;
}
}  // namespace

// tryLockInnerAsync: KEYS [K], ARGV [lease, field].
std::vector<std::string> redisson_spin_lock_command(std::string_view key, std::string_view field,
                                                    std::string_view lease_ms) {
  return {"EVAL",
          "if (redis.call('exists', KEYS[1]) == 0) then redis.call('hincrby', KEYS[1], ARGV[2], 1); "
          "redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; if (redis.call('hexists', KEYS[1], ARGV[2]) == "
          "1) then redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; "
          "end; return redis.call('pttl', KEYS[1]);",
          "1",
          std::string(key),
          std::string(lease_ms),
          std::string(field)};
}

// unlockInnerAsync: KEYS [K, unlock latch], ARGV [lease, field, latch px]. No publish.
std::vector<std::string> redisson_spin_unlock_command(std::string_view key, std::string_view field,
                                                      std::string_view lease_ms) {
  return {"EVAL",
          "local val = redis.call('get', KEYS[2]); if val ~= false then return tonumber(val);end; if "
          "(redis.call('hexists', KEYS[1], ARGV[2]) == 0) then return nil;end; local counter = redis.call('hincrby', "
          "KEYS[1], ARGV[2], -1); if (counter > 0) then redis.call('pexpire', KEYS[1], ARGV[1]); redis.call('set', "
          "KEYS[2], 0, 'px', ARGV[3]); return 0; else redis.call('del', KEYS[1]); redis.call('set', KEYS[2], 1, 'px', "
          "ARGV[3]); return 1; end; ",
          "2",
          std::string(key),
          new_unlock_latch(key),
          std::string(lease_ms),
          std::string(field),
          "10000"};
}

// unlockInnerAsync: KEYS [K, queue, timeouts, channel, unlock latch], ARGV ["0", lease, field, now,
// publish command, latch px]. The latch key is Redisson's own (its client deletes it afterwards).
std::vector<std::string> redisson_fair_unlock_command(std::string_view key, std::string_view field,
                                                      std::string_view publish) {
  return {"EVAL",
          "local val = redis.call('get', KEYS[5]); if val ~= false then return tonumber(val);end; while true do local "
          "firstThreadId2 = redis.call('lindex', KEYS[2], 0);if firstThreadId2 == false then break;end; local timeout "
          "= redis.call('zscore', KEYS[3], firstThreadId2);if timeout ~= false and tonumber(timeout) <= "
          "tonumber(ARGV[4]) then redis.call('zrem', KEYS[3], firstThreadId2); redis.call('lpop', KEYS[2]); else "
          "break;end; end;if (redis.call('exists', KEYS[1]) == 0) then local nextThreadId = redis.call('lindex', "
          "KEYS[2], 0); if nextThreadId ~= false then redis.call(ARGV[5], KEYS[4] .. ':' .. nextThreadId, ARGV[1]); "
          "end; redis.call('set', KEYS[5], 1, 'px', ARGV[6]); return 1; end;if (redis.call('hexists', KEYS[1], "
          "ARGV[3]) == 0) then return nil;end; local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); if "
          "(counter > 0) then redis.call('pexpire', KEYS[1], ARGV[2]); redis.call('set', KEYS[5], 0, 'px', ARGV[6]); "
          "return 0; end; redis.call('del', KEYS[1]); redis.call('set', KEYS[5], 1, 'px', ARGV[6]); local nextThreadId "
          "= redis.call('lindex', KEYS[2], 0); if nextThreadId ~= false then redis.call(ARGV[5], KEYS[4] .. ':' .. "
          "nextThreadId, ARGV[1]); end; return 1; ",
          "5",
          std::string(key),
          redisson_fair_queue(key),
          redisson_fair_deadlines(key),
          redisson_channel(key),
          new_unlock_latch(key),
          "0",
          "30000",
          std::string(field),
          java_now_ms(),
          std::string(publish),
          "10000"};
}

// acquireFailedAsync: KEYS [queue, timeouts], ARGV [field, wait].
std::vector<std::string> redisson_fair_give_up_command(std::string_view key, std::string_view field,
                                                       std::string_view wait_ms) {
  return {"EVAL",
          "local queue = redis.call('lrange', KEYS[1], 0, -1);local i = 1;while i <= #queue and queue[i] ~= ARGV[1] do "
          "i = i + 1;end;i = i + 1;while i <= #queue do redis.call('zincrby', KEYS[2], -tonumber(ARGV[2]), "
          "queue[i]);i = i + 1;end;redis.call('zrem', KEYS[2], ARGV[1]);redis.call('lrem', KEYS[1], 0, ARGV[1]);",
          "2",
          redisson_fair_queue(key),
          redisson_fair_deadlines(key),
          std::string(field),
          std::string(wait_ms)};
}

// ---- RReadWriteLock (RedissonReadLock.java, RedissonWriteLock.java, ReadLockTask.java at
// redisson-4.7.0), the scripts verbatim ----

std::string redisson_rwlock_channel(std::string_view key) { return "redisson_rwlock:{" + std::string(key) + "}"; }
std::string redisson_reader_timeout(std::string_view key, std::string_view field, int hold) {
  return "{" + std::string(key) + "}:" + std::string(field) + ":rwlock_timeout:" + std::to_string(hold);
}

// KEYS [K, timeoutPrefix], ARGV [lease, field, field + ":write"].
std::vector<std::string> redisson_read_lock_command(std::string_view key, std::string_view field,
                                                    std::string_view lease_ms) {
  return {"EVAL", R"lua(local mode = redis.call('hget', KEYS[1], 'mode'); if (mode == false) then redis.call('hset', KEYS[1], 'mode', 'read'); redis.call('hset', KEYS[1], ARGV[2], 1); redis.call('set', KEYS[2] .. ':1', 1); redis.call('pexpire', KEYS[2] .. ':1', ARGV[1]); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; if (mode == 'read') or (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 1) then local ind = redis.call('hincrby', KEYS[1], ARGV[2], 1); local key = KEYS[2] .. ':' .. ind;redis.call('set', key, 1); redis.call('pexpire', key, ARGV[1]); local remainTime = redis.call('pttl', KEYS[1]); redis.call('pexpire', KEYS[1], math.max(remainTime, ARGV[1])); return nil; end;return redis.call('pttl', KEYS[1]);)lua", "2", std::string(key),
          "{" + std::string(key) + "}:" + std::string(field) + ":rwlock_timeout", std::string(lease_ms),
          std::string(field), std::string(field) + ":write"};
}

// KEYS [K, channel, timeoutPrefix, keyPrefix, latch], ARGV ["0", field, publish, latch px].
std::vector<std::string> redisson_read_unlock_command(std::string_view key, std::string_view field,
                                                      std::string_view publish) {
  return {"EVAL", R"lua(local val = redis.call('get', KEYS[5]); if val ~= false then return tonumber(val);end; local mode = redis.call('hget', KEYS[1], 'mode'); if (mode == false) then redis.call(ARGV[3], KEYS[2], ARGV[1]); redis.call('set', KEYS[5], 1, 'px', ARGV[4]); return nil; end; local lockExists = redis.call('hexists', KEYS[1], ARGV[2]); if (lockExists == 0) then return nil;end; local counter = redis.call('hincrby', KEYS[1], ARGV[2], -1); if (counter == 0) then redis.call('hdel', KEYS[1], ARGV[2]); end;redis.call('del', KEYS[3] .. ':' .. (counter+1)); if (redis.call('hlen', KEYS[1]) > 1) then local maxRemainTime = -3; local keys = redis.call('hkeys', KEYS[1]); for n, key in ipairs(keys) do counter = tonumber(redis.call('hget', KEYS[1], key)); if type(counter) == 'number' then for i=counter, 1, -1 do local remainTime = redis.call('pttl', KEYS[4] .. ':' .. key .. ':rwlock_timeout:' .. i); maxRemainTime = math.max(remainTime, maxRemainTime);end; end; end; if maxRemainTime > 0 then redis.call('pexpire', KEYS[1], maxRemainTime); redis.call('set', KEYS[5], 0, 'px', ARGV[4]); return 0; end;if mode == 'write' then redis.call('set', KEYS[5], 0, 'px', ARGV[4]); return 0;end; end; redis.call('del', KEYS[1]); redis.call(ARGV[3], KEYS[2], ARGV[1]); redis.call('set', KEYS[5], 1, 'px', ARGV[4]); return 1; )lua", "5", std::string(key), redisson_rwlock_channel(key),
          "{" + std::string(key) + "}:" + std::string(field) + ":rwlock_timeout", "{" + std::string(key) + "}",
          new_unlock_latch(key), "0", std::string(field),
          std::string(publish), "10000"};
}

// KEYS [K], ARGV [lease, field + ":write"].
std::vector<std::string> redisson_write_lock_command(std::string_view key, std::string_view field,
                                                     std::string_view lease_ms) {
  return {"EVAL", R"lua(local mode = redis.call('hget', KEYS[1], 'mode'); if (mode == false) then redis.call('hset', KEYS[1], 'mode', 'write'); redis.call('hset', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; if (mode == 'write') then if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then redis.call('hincrby', KEYS[1], ARGV[2], 1); local currentExpire = redis.call('pttl', KEYS[1]); redis.call('pexpire', KEYS[1], currentExpire + ARGV[1]); return nil; end; end;return redis.call('pttl', KEYS[1]);)lua", "1", std::string(key), std::string(lease_ms),
          std::string(field) + ":write"};
}

// KEYS [K, channel, latch], ARGV ["1", internalLockLeaseTime, field + ":write", publish, latch px].
std::vector<std::string> redisson_write_unlock_command(std::string_view key, std::string_view field,
                                                       std::string_view publish) {
  return {"EVAL", R"lua(local val = redis.call('get', KEYS[3]); if val ~= false then return tonumber(val);end; local mode = redis.call('hget', KEYS[1], 'mode'); if (mode == false) then redis.call(ARGV[4], KEYS[2], ARGV[1]); redis.call('set', KEYS[3], 1, 'px', ARGV[5]); return nil; end;if (mode == 'write') then local lockExists = redis.call('hexists', KEYS[1], ARGV[3]); if (lockExists == 0) then return nil;else local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); if (counter > 0) then redis.call('pexpire', KEYS[1], ARGV[2]); redis.call('set', KEYS[3], 0, 'px', ARGV[5]); return 0; else redis.call('hdel', KEYS[1], ARGV[3]); if (redis.call('hlen', KEYS[1]) == 1) then redis.call('del', KEYS[1]); redis.call(ARGV[4], KEYS[2], ARGV[1]); else redis.call('hset', KEYS[1], 'mode', 'read'); end; redis.call('set', KEYS[3], 1, 'px', ARGV[5]); return 1; end; end; end; return nil;)lua", "3", std::string(key), redisson_rwlock_channel(key),
          new_unlock_latch(key), "1", "30000",
          std::string(field) + ":write", std::string(publish), "10000"};
}

// ReadLockTask for one lock: KEYS [K, keyPrefix], ARGV [lease, 1, field].
std::vector<std::string> redisson_read_renew_command(std::string_view key, std::string_view field,
                                                     std::string_view lease_ms) {
  return {"EVAL", R"lua(local result = {} local argIdx = 2 for i = 1, #KEYS, 2 do local anyAlive = false; local lockNamesCount = tonumber(ARGV[argIdx]); argIdx = argIdx + 1; for k = 1, lockNamesCount do local counter = redis.call('hget', KEYS[i], ARGV[argIdx]); if (counter ~= false) then anyAlive = true; for c=counter, 1, -1 do redis.call('pexpire', KEYS[i+1] .. ':' .. ARGV[argIdx] .. ':rwlock_timeout:' .. c, ARGV[1]); end; end; argIdx = argIdx + 1; end; if (anyAlive) then redis.call('pexpire', KEYS[i], ARGV[1]); table.insert(result, 1); else table.insert(result, 0); end; end; return result;)lua", "2", std::string(key), "{" + std::string(key) + "}",
          std::string(lease_ms), "1", std::string(field)};
}

// ---- RSemaphore and RCountDownLatch (RedissonSemaphore.java, RedissonCountDownLatch.java at
// redisson-4.7.0), the scripts verbatim ----

std::string redisson_semaphore_channel(std::string_view key) { return "redisson_sc:{" + std::string(key) + "}"; }
std::string redisson_latch_channel(std::string_view key) {
  return "redisson_countdownlatch__channel__{" + std::string(key) + "}";
}

// tryAcquire(n): KEYS [K], ARGV [n]. 1 = taken, 0 = not.
std::vector<std::string> redisson_semaphore_acquire_command(std::string_view key, int permits) {
  return {"EVAL", R"lua(local value = redis.call('get', KEYS[1]); if (value ~= false and tonumber(value) >= tonumber(ARGV[1])) then local val = redis.call('decrby', KEYS[1], ARGV[1]); return 1; end; return 0;)lua", "1", std::string(key), std::to_string(permits)};
}

// release(n): KEYS [K, channel], ARGV [n, publish].
std::vector<std::string> redisson_semaphore_release_command(std::string_view key, int permits, std::string_view publish) {
  return {"EVAL", R"lua(local value = redis.call('incrby', KEYS[1], ARGV[1]); redis.call(ARGV[2], KEYS[2], value); )lua", "2", std::string(key), redisson_semaphore_channel(key),
          std::to_string(permits), std::string(publish)};
}

// trySetPermits(n): KEYS [K, channel], ARGV [n, publish]. 1 = set.
std::vector<std::string> redisson_semaphore_try_set_command(std::string_view key, int permits, std::string_view publish) {
  return {"EVAL", R"lua(local value = redis.call('get', KEYS[1]); if (value == false) then redis.call('set', KEYS[1], ARGV[1]); redis.call(ARGV[2], KEYS[2], ARGV[1]); return 1;end;return 0;)lua", "2", std::string(key), redisson_semaphore_channel(key),
          std::to_string(permits), std::string(publish)};
}

// countDown: KEYS [K, channel], ARGV ["0", publish].
std::vector<std::string> redisson_latch_count_down_command(std::string_view key, std::string_view publish) {
  return {"EVAL", R"lua(local v = redis.call('decr', KEYS[1]);if v <= 0 then redis.call('del', KEYS[1]) end;if v == 0 then redis.call(ARGV[2], KEYS[2], ARGV[1]) end;)lua", "2", std::string(key), redisson_latch_channel(key), "0",
          std::string(publish)};
}

// trySetCount(n): KEYS [K, channel], ARGV ["1", n, publish]. 1 = set.
std::vector<std::string> redisson_latch_try_set_count_command(std::string_view key, int count, std::string_view publish) {
  return {"EVAL", R"lua(if redis.call('exists', KEYS[1]) == 0 then redis.call('set', KEYS[1], ARGV[2]); redis.call(ARGV[3], KEYS[2], ARGV[1]); return 1 else return 0 end)lua", "2", std::string(key), redisson_latch_channel(key), "1",
          std::to_string(count), std::string(publish)};
}

// ---- RPermitExpirableSemaphore (RedissonPermitExpirableSemaphore.java at redisson-4.7.0), the
// scripts verbatim; permit ids as 16 raw bytes (3.17.0+) ----

std::string redisson_permit_leases(std::string_view key) { return "{" + std::string(key) + "}:timeout"; }

// tryAcquire(n, lease): KEYS [K, timeout, channel], ARGV [n, timeoutDate, now, nonExpirable, publish, ids...].
std::vector<std::string> redisson_expirable_acquire_command(std::string_view key,
                                                           const std::vector<std::string>& raw_ids,
                                                           std::int64_t lease_ms) {
  const std::int64_t now = std::stoll(java_now_ms());
  std::vector<std::string> command{"EVAL", R"lua(local expiredIds = redis.call('zrangebyscore', KEYS[2], 0, ARGV[3], 'limit', 0, ARGV[1]); if #expiredIds > 0 then redis.call('zrem', KEYS[2], unpack(expiredIds)); local value = redis.call('incrby', KEYS[1], #expiredIds); if tonumber(value) > 0 then redis.call(ARGV[5], KEYS[3], value); end;end; local value = redis.call('get', KEYS[1]); if (value ~= false and tonumber(value) >= tonumber(ARGV[1])) then redis.call('decrby', KEYS[1], ARGV[1]); for i = 6, #ARGV, 1 do redis.call('zadd', KEYS[2], ARGV[2], ARGV[i]); end; local ttl = redis.call('pttl', KEYS[1]); if ttl > 0 then redis.call('pexpire', KEYS[2], ttl); end; return 'OK'; end; local v = redis.call('zrange', KEYS[2], 0, 0, 'WITHSCORES'); if v[1] ~= nil and v[2] ~= ARGV[4] then return ':' .. tostring(v[2]); end return nil;)lua", "3", std::string(key), redisson_permit_leases(key),
          redisson_semaphore_channel(key), std::to_string(raw_ids.size()), std::to_string(now + lease_ms),
          std::to_string(now), "922337203685477", "publish"};
  command.insert(command.end(), raw_ids.begin(), raw_ids.end());
  return command;
}

std::vector<std::string> redisson_expirable_acquire_command(std::string_view key, std::string_view raw_id,
                                                           std::int64_t lease_ms) {
  return redisson_expirable_acquire_command(key, std::vector<std::string>{std::string(raw_id)}, lease_ms);
}

// tryRelease(ids): KEYS [K, channel, timeout], ARGV [n, now, publish, ids...].
std::vector<std::string> redisson_expirable_release_command(std::string_view key,
                                                           const std::vector<std::string>& raw_ids) {
  std::vector<std::string> command{"EVAL", R"lua(for i = 4, #ARGV, 1 do local expire = redis.call('zscore', KEYS[3], ARGV[i]);if expire== false or tonumber(expire) <= tonumber(ARGV[2]) then return 0;end; end; local expiredIds = redis.call('zrangebyscore', KEYS[3], 0, ARGV[2], 'limit', 0, -1); if #expiredIds > 0 then redis.call('zrem', KEYS[3], unpack(expiredIds)); local value = redis.call('incrby', KEYS[1], #expiredIds); if tonumber(value) > 0 then redis.call(ARGV[3], KEYS[2], value); end; end; local keys = {}; for i = 4, #ARGV, 1 do table.insert(keys, ARGV[i]); end; local removed = redis.call('zrem', KEYS[3], unpack(keys)); redis.call('incrby', KEYS[1], removed); redis.call(ARGV[3], KEYS[2], removed); return removed;)lua", "3", std::string(key), redisson_semaphore_channel(key),
          redisson_permit_leases(key), std::to_string(raw_ids.size()), java_now_ms(), "publish"};
  command.insert(command.end(), raw_ids.begin(), raw_ids.end());
  return command;
}

// tryRelease(id): KEYS [K, channel, timeout], ARGV [id, 1, now, publish].
std::vector<std::string> redisson_expirable_release_command(std::string_view key, std::string_view raw_id) {
  return {"EVAL", R"lua(local expire = redis.call('zscore', KEYS[3], ARGV[1]);local removed = redis.call('zrem', KEYS[3], ARGV[1]);if tonumber(removed) ~= 1 then return 0;end;local value = redis.call('incrby', KEYS[1], ARGV[2]); redis.call(ARGV[4], KEYS[2], value); if tonumber(expire) <= tonumber(ARGV[3]) then return 0;end;return 1;)lua", "3", std::string(key), redisson_semaphore_channel(key),
          redisson_permit_leases(key), std::string(raw_id), "1", java_now_ms(), "publish"};
}

PeerSubscriber::PeerSubscriber(const std::string& unix_path, std::string_view subscribe_command,
                               const std::string& channel)
    : context_(redisConnectUnix(unix_path.c_str())) {
  subscribe(subscribe_command, channel);
}

PeerSubscriber::PeerSubscriber(int tcp_port, std::string_view subscribe_command, const std::string& channel)
    : context_(redisConnect("127.0.0.1", tcp_port)) {
  subscribe(subscribe_command, channel);
}

PeerSubscriber::~PeerSubscriber() {
  if (context_ != nullptr) redisFree(context_);
}

void PeerSubscriber::subscribe(std::string_view command, const std::string& channel) {
  if (context_ == nullptr || context_->err != 0) return;
  const timeval timeout{10, 0};
  redisSetTimeout(context_, timeout);
  auto* reply = static_cast<redisReply*>(
      redisCommand(context_, "%b %b", command.data(), command.size(), channel.data(), channel.size()));
  // The confirmation: [subscribe|ssubscribe, channel, count].
  subscribed_ = reply != nullptr && reply->type == REDIS_REPLY_ARRAY && reply->elements == 3;
  if (reply != nullptr) freeReplyObject(reply);
}

std::optional<std::string> PeerSubscriber::next_message() {
  if (!subscribed_) return std::nullopt;
  void* reply = nullptr;
  if (redisGetReply(context_, &reply) != REDIS_OK || reply == nullptr) return std::nullopt;
  auto* message = static_cast<redisReply*>(reply);
  std::optional<std::string> payload;
  if (message->type == REDIS_REPLY_ARRAY && message->elements == 3) {
    payload = std::string(message->element[2]->str, message->element[2]->len);
  }
  freeReplyObject(reply);
  return payload;
}

}  // namespace lockbridge::testing
