// What the locks of one Client share: the connection pool, the loaded scripts, the subscriber
// that hears releases, and the count of requests sent.
#pragma once

#include <atomic>
#include <cstdint>

#include "connection_pool.hpp"
#include "script_runner.hpp"
#include "waiting/release_notifier.hpp"

namespace lockbridge::detail {

struct ClientState {
  ClientState(const RedisUrl& url, const ClientOptions& options)
      : pool(url, options, round_trips), notifier(url, options, round_trips) {}
  // Requests written by every connection of this Client (pool and subscriber), connection setup
  // included. Declared first: the pool and the notifier count into it.
  std::atomic<std::uint64_t> round_trips{0};
  ConnectionPool pool;
  ScriptCache scripts;
  ReleaseNotifier notifier;
};

}  // namespace lockbridge::detail
