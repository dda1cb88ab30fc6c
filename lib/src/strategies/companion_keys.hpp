// Names of the keys and channels that belong to a lock key: its release channel, fence counter, fair queue
// and waiter queue. Each lives in the lock key's Redis Cluster hash slot, so one script can touch them
// together and sharded pub/sub reaches the shard that owns the lock.
#pragma once

#include <string>
#include <string_view>

namespace lockbridge::detail {

// `key` and `suffix` combined into a name whose hashed_part() (cluster/key_slot.hpp) equals the key's: the key itself
// plus the suffix when it has a hash tag, else the key wrapped in braces, e.g. "orders:42" ->
// "{orders:42}:lockbridge:released". A key containing '}' without a valid tag has no same-slot
// name of that form; it gets key + suffix, which is right on one Redis; on Redis Cluster such a
// key's companions may live in another slot, and the features that need them are refused. `suffix` must not contain
// braces.
std::string companion_name(std::string_view key, std::string_view suffix);

// The sharded pub/sub channel a release of `key` is announced on.
std::string release_channel(std::string_view key);
// A glob pattern (PUBSUB CHANNELS, SCAN MATCH) matching the names that begin with `prefix`.
std::string prefix_pattern(std::string_view prefix);
// The counter the fencing token of `key` is drawn from.
std::string fence_counter(std::string_view key);
// The fair-mode queue of `key` (a list of waiter ids) and its waiters' deadlines (a hash).
std::string fair_queue(std::string_view key);
std::string fair_deadlines(std::string_view key);
// The waiters of `key` in notify mode, in arrival order (a list of waiter ids), and their times (a
// hash: "<deadline ms> <starving at ms> <grant spec>"), kept by the queued scripts (scripts.hpp, kFairPrelude).
std::string waiter_queue(std::string_view key);
std::string waiter_times(std::string_view key);
// "<waiter id> <fence> <value>": the lock a release granted to a starving waiter (scripts.hpp,
// kGrantPrelude), until that waiter's next attempt finds it or the grant's lease ends.
std::string grant_record(std::string_view key);

}  // namespace lockbridge::detail
