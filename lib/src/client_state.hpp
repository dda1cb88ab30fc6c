// What the locks of one Client share: the connection pool, the loaded scripts, the subscriber
// that hears releases, the renewal thread that keeps leases, and the count of requests sent.
#pragma once

#include <atomic>
#include <cstdint>

#include "connection_pool.hpp"
#include "lease/lease_keeper.hpp"
#include "script_runner.hpp"
#include "waiting/release_notifier.hpp"

namespace lockbridge::detail {

struct ClientState {
  ClientState(const RedisUrl& url, const ClientOptions& options)
      : pool(url, options, round_trips), notifier(url, options, round_trips), keeper(url, options, scripts, round_trips) {}
  // Requests written by every connection of this Client (pool and subscriber), connection setup
  // included. Declared first: the pool and the notifier count into it.
  std::atomic<std::uint64_t> round_trips{0};
  ConnectionPool pool;
  ScriptCache scripts;
  ReleaseNotifier notifier;
  LeaseKeeper keeper;  // last: its thread stops before the scripts it uses go away
};

}  // namespace lockbridge::detail
