// lockbridge: the keys and channels lockbridge keeps beside a lock key, for tools that look at
// locks from outside (lockbridge watch): where a release is announced, where waiters queue, where
// fences are drawn. Each lives in the lock key's Redis Cluster hash slot.
#pragma once

#include <string>
#include <string_view>

#include "lockbridge/export.hpp"

namespace lockbridge {

struct LOCKBRIDGE_API LockKeyNames {
  std::string release_channel;   // sharded pub/sub: releases of token and legacy locks
  std::string redisson_channel;  // Redisson's release channel (redisson_lock__channel:{key})
  std::string waiter_queue;      // notify mode's waiters, in arrival order (a list of waiter ids)
  std::string waiter_times;      // their "<deadline ms> <starving at ms> <grant spec>" (a hash)
  std::string fair_queue;        // fair mode's queue (a list)
  std::string fence_counter;     // the last fencing token drawn (a number)
  std::string fair_deadlines;    // fair mode's waiters' "<deadline ms> 0 <grant spec>" (a hash)
  std::string grant;             // "<waiter id> <fence> <value>": the waiter a release granted the lock to
  std::string waiter_channels;   // a PUBSUB pattern: each waiting Client's own release channel (sharded)
};

LOCKBRIDGE_API LockKeyNames lock_key_names(std::string_view key);

}  // namespace lockbridge
