// What the locks of one Client share: the connection pool, the loaded scripts, the subscriber
// that hears releases, the renewal thread that keeps leases, and the count of requests sent.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "connection_pool.hpp"
#include "endpoint.hpp"
#include "lease/lease_keeper.hpp"
#include "script_runner.hpp"
#include "waiting/release_notifier.hpp"

namespace lockbridge::detail {

struct ClientState {
  // Throws Error{bad_option} for a topology the library cannot serve.
  ClientState(RedisUrl url, const ClientOptions& options);

  // Requests written by every connection of this Client (pool and subscriber), connection setup
  // included. Declared first: the pools and the notifier count into it.
  std::atomic<std::uint64_t> round_trips{0};
  const RedisUrl url;  // as the Client was given it
  // Where pool, notifier and keeper connect: the server, the sentinels' master, or (redlock) the
  // first master, which also answers Client::command().
  const std::shared_ptr<Endpoint> endpoint;
  ConnectionPool pool;
  ScriptCache scripts;  // a script's SHA1 is the same on every server: one cache serves every node
  // redlock:// only: a pool per master, in URL order; a lock is held on a majority of them.
  std::vector<std::unique_ptr<ConnectionPool>> masters;
  ReleaseNotifier notifier;
  LeaseKeeper keeper;  // last: its thread stops before the scripts it uses go away

  bool redlock() const noexcept { return !masters.empty(); }
};

}  // namespace lockbridge::detail
