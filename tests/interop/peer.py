#!/usr/bin/env python3
"""An independent lock peer for lockbridge's interop tests, written from the peers' public source
(abelaska/jedis-lock tag 1.0.0, JedisLock.java; redisson/redisson, RedissonLock.java), not from
lockbridge's code. It contends on KEY and checks mutual exclusion with CHECK_KEY exactly as
tests/integration/lock_contender_main.cpp does (INCR must give 1 while holding), and prints the
same summary line, plus how its waits ended:

  acquisitions=N violations=V errors=E woken=W timed_out=T

usage: peer.py redisson|jedis SOCKET KEY CHECK_KEY ACQUISITIONS [LEASE_MS [HOLD_MS]]

With PEER_WAITING_FILE set, a Redisson peer creates that file each time an attempt made while
subscribed has failed: from then on a release message cannot be missed, so a test that waits for
the file before releasing knows the peer must be woken (and not merely find the lock free).
"""
import os
import sys
import threading
import time
import uuid

import redis

# Redisson tryLockInnerAsync (docs/wire-formats.md §4.2): nil = acquired, else the holder's PTTL.
REDISSON_LOCK = """
if (redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
return redis.call('pttl', KEYS[1])
"""

# Redisson unlockInnerAsync, 3.10.6-3.23 layout (docs/wire-formats.md §4.3).
REDISSON_UNLOCK = """
if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then
  return nil
end
local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if (counter > 0) then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 0
end
redis.call('del', KEYS[1])
redis.call('publish', KEYS[2], ARGV[1])
return 1
"""


class Stats:
    def __init__(self):
        self.acquisitions = 0
        self.violations = 0
        self.errors = 0
        self.woken = 0
        self.timed_out = 0


def mark_waiting():
    path = os.environ.get("PEER_WAITING_FILE")
    if path:
        with open(path, "w"):
            pass


def redisson_contend(r, key, lease_ms, stats):
    """RLock.lock(leaseTime): try, subscribe to the channel, then wait for its message (or the
    holder's TTL) between tries (docs/wire-formats.md §4.6). Returns the field that holds the lock."""
    field = "%s:%d" % (uuid.uuid4(), threading.get_ident() % 1000000)
    channel = "redisson_lock__channel:{%s}" % key
    if r.eval(REDISSON_LOCK, 1, key, lease_ms, field) is None:
        return field, channel
    pubsub = r.pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(channel)
    try:
        while True:
            ttl = r.eval(REDISSON_LOCK, 1, key, lease_ms, field)
            if ttl is None:
                return field, channel
            mark_waiting()
            wait = ttl / 1000.0 if ttl >= 0 else 60.0
            started = time.monotonic()
            message = None
            while message is None and time.monotonic() - started < wait:
                message = pubsub.get_message(timeout=max(0.001, wait - (time.monotonic() - started)))
            if message is not None:
                stats.woken += 1
            elif wait >= 10:
                stats.timed_out += 1  # a long lease ran out with no message: a release went unheard
    finally:
        pubsub.close()


def redisson_release(r, key, channel, field, lease_ms):
    if r.eval(REDISSON_UNLOCK, 2, key, channel, "0", lease_ms, field) is None:
        raise RuntimeError("unlock: not locked by this peer")


def jedis_contend(r, key, lease_ms, stats):
    """jedis-lock 1.0.0 acquire() (docs/wire-formats.md §1.1), polling every millisecond here."""
    while True:
        expires = int(time.time() * 1000) + lease_ms + 1
        value = str(expires)
        if r.setnx(key, value):
            return value
        current = r.get(key)
        if current is not None and int(current) < int(time.time() * 1000):
            old = r.getset(key, value)
            if old is not None and old == current:
                return value
        time.sleep(0.001)


def main():
    if len(sys.argv) not in (6, 7, 8):
        print(__doc__, file=sys.stderr)
        return 2
    kind, socket, key, check_key = sys.argv[1:5]
    acquisitions = int(sys.argv[5])
    lease_ms = int(sys.argv[6]) if len(sys.argv) >= 7 else 60000
    hold_s = int(sys.argv[7]) / 1000.0 if len(sys.argv) == 8 else 0.0
    r = redis.Redis(unix_socket_path=socket)
    stats = Stats()
    for _ in range(acquisitions):
        try:
            if kind == "redisson":
                field, channel = redisson_contend(r, key, lease_ms, stats)
            else:
                jedis_contend(r, key, lease_ms, stats)
            if r.incr(check_key) != 1:
                stats.violations += 1
            time.sleep(hold_s)
            r.decr(check_key)
            if kind == "redisson":
                redisson_release(r, key, channel, field, lease_ms)
            else:
                r.delete(key)  # jedis-lock's release: a plain DEL
            stats.acquisitions += 1
        except Exception as error:  # counted, and the run goes on: the test reads the totals
            print("peer: %s" % error, file=sys.stderr)
            stats.errors += 1
    print("acquisitions=%d violations=%d errors=%d woken=%d timed_out=%d"
          % (stats.acquisitions, stats.violations, stats.errors, stats.woken, stats.timed_out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
