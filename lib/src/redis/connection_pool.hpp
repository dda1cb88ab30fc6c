// A small thread-safe pool of connections to one server (an Endpoint: with Sentinel, the current
// master). No mutex is held across a network round trip: connects happen outside the lock after
// reserving a slot. A broken connection is dropped when returned, and the next borrow connects
// again, failing fast during a reconnect backoff. Idle connections to a former master are dropped.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "redis/connection.hpp"
#include "redis/endpoint.hpp"
#include "redis/reconnect_backoff.hpp"

namespace lockbridge::detail {

class ConnectionPool {
 public:
  explicit ConnectionPool(std::shared_ptr<Endpoint> endpoint);

  // A borrowed connection; goes back to the pool (or is dropped if broken) on destruction.
  class PooledConnection {
   public:
    PooledConnection(ConnectionPool& pool, std::unique_ptr<Connection> connection) noexcept
        : pool_(&pool), connection_(std::move(connection)) {}
    PooledConnection(PooledConnection&&) noexcept = default;
    PooledConnection& operator=(PooledConnection&&) = delete;
    ~PooledConnection() {
      if (connection_) pool_->give_back(std::move(connection_));
    }
    Connection& operator*() const noexcept { return *connection_; }
    Connection* operator->() const noexcept { return connection_.get(); }

   private:
    ConnectionPool* pool_;
    std::unique_ptr<Connection> connection_;
  };

  // Blocks while all pool_size connections are busy, for at most the command timeout, and never
  // past a caller's `deadline` that is still ahead (then Error{timeout}); a deadline already passed
  // (a single try) still waits one command timeout. Sentinel re-resolution stops at the deadline
  // too (Endpoint::refresh_if_stale). Throws connect errors, or io during the reconnect backoff.
  PooledConnection borrow(
      std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max());

  const RedisUrl& url() const noexcept { return endpoint_->url(); }
  const std::shared_ptr<Endpoint>& endpoint() const noexcept { return endpoint_; }
  const ClientOptions& options() const noexcept { return endpoint_->options(); }

 private:
  void give_back(std::unique_ptr<Connection> connection) noexcept;

  const std::shared_ptr<Endpoint> endpoint_;
  const ClientOptions& options_;  // the endpoint's
  std::mutex mutex_;
  std::condition_variable slot_freed_;
  std::vector<std::unique_ptr<Connection>> idle_;
  std::size_t open_ = 0;      // idle + borrowed + being connected
  ReconnectBackoff backoff_;  // after failed connects
};

}  // namespace lockbridge::detail
