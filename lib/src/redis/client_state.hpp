// What the locks of one Client share: the connection pool, the loaded scripts, the subscriber
// that hears releases, the renewal thread that keeps leases, and the count of requests sent.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "cluster/key_slot.hpp"
#include "cluster/router.hpp"
#include "lease/lease_keeper.hpp"
#include "observe/event_queue.hpp"
#include "redis/connection_pool.hpp"
#include "redis/endpoint.hpp"
#include "redis/script_runner.hpp"
#include "waiting/release_notifier.hpp"

namespace lockbridge::detail {

struct ClientState {
  // Throws Error{bad_option} for a topology the library cannot serve.
  ClientState(RedisUrl url, const ClientOptions& options);

  // Requests written by every connection of this Client (pool and subscriber), connection setup
  // included. Declared first: the pools and the notifier count into it.
  std::atomic<std::uint64_t> round_trips{0};
  const RedisUrl url;                        // as the Client was given it
  const std::shared_ptr<Observer> observer;  // ClientOptions::observer
  // Begins the ids of this Client's queued waiters ("<tag>-<random>"): a release that names one
  // announces it on the key's release channel + ":<tag>", which only this Client's subscriber
  // hears, so a release wakes one process, not every waiting one (docs/design.md §10.2).
  const std::string waiter_tag;
  // The observer thread: every lock's events, the watchdog's too. Destroyed after the keeper and
  // the locks (which hold this state), so it delivers everything they posted.
  EventQueue events;
  // Where pool, notifier and keeper connect: the server, the sentinels' master, or (redlock) the
  // first master, which also answers Client::command(). Unused with Redis Cluster.
  const std::shared_ptr<Endpoint> endpoint;
  ConnectionPool pool;
  ScriptCache scripts;  // a script's SHA1 is the same on every server: one cache serves every node
  // redlock:// only: a pool per master, in URL order; a lock is held on a majority of them.
  std::vector<std::unique_ptr<ConnectionPool>> masters;
  // redis-cluster:// only: the slot map and a pool (and notifier) per master.
  std::unique_ptr<ClusterRouter> cluster;
  ReleaseNotifier notifier;
  LeaseKeeper keeper;  // last: its thread stops before the scripts it uses go away

  bool redlock() const noexcept { return !masters.empty(); }

  // Runs `operation(Connection&)` on a connection to the server that holds `key`: the pool's, or
  // with Redis Cluster the master serving its slot (redirects followed; the operation must be safe
  // to repeat when it failed on a redirect). No wait for a pooled connection, a sentinel or a
  // TRYAGAIN runs past `deadline` (ConnectionPool::borrow, ClusterRouter::route).
  template <class Operation>
  void with_connection(std::string_view key, Operation&& operation,
                       std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
    if (cluster) {
      cluster->route(key_slot(key), operation, deadline);
      return;
    }
    auto connection = pool.borrow(deadline);
    operation(*connection);
  }

  // The subscriber that hears announcements on `channel`: with Redis Cluster, the one on the
  // master serving the channel's slot (a sharded message is delivered only there).
  ReleaseNotifier& notifier_for(std::string_view channel) {
    return cluster ? cluster->notifier_for(key_slot(channel)) : notifier;
  }
};

}  // namespace lockbridge::detail
