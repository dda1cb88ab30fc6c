// Where a Client's connections go. For redis:// and unix:// that is the URL's server. For
// redis-sentinel:// it is the master the sentinels name, asked of them on first use and again
// after a connection to the master failed or broke: a failover moves the Client to the promoted
// replica without a restart. Every connection carries the generation of the address it was made
// for, so connections to a former master are dropped instead of reused.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "redis/connection.hpp"

namespace lockbridge::detail {

class Endpoint {
 public:
  // `url` is single-server or sentinel; requests written add to `round_trips`, which must outlive it.
  Endpoint(RedisUrl url, ClientOptions options, std::atomic<std::uint64_t>& round_trips);

  const RedisUrl& url() const noexcept { return url_; }
  const ClientOptions& options() const noexcept { return options_; }

  // A new connection to the current server (asking the sentinels first when the master is not
  // known, or may have moved). A sentinel-named server must say ROLE master. Throws Error: io or
  // timeout (naming every sentinel asked when none named a master), server_reply.
  std::unique_ptr<Connection> connect();

  // A connection broke (io, timeout, READONLY): with Sentinel, ask the sentinels again before the
  // next connect, in case the master moved.
  void connection_broke(const Connection& connection) noexcept;

  // The connection was made for an address this endpoint no longer uses.
  bool outdated(const Connection& connection) const noexcept {
    return connection.generation() != generation_.load(std::memory_order_acquire);
  }

  // With Sentinel, when a connection broke: ask the sentinels now (at most once per broken
  // generation), so that idle connections to a former master are seen to be outdated. Throws like
  // connect() when no sentinel answers. Once `deadline` has passed, no further sentinel is asked
  // after one that failed (each costs up to a connect and a command timeout).
  void refresh_if_stale(std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max());

 private:
  // Asks the sentinels, in turn, starting with the last that answered; none after `deadline`
  // except the first.
  RedisUrl resolve_master(std::chrono::steady_clock::time_point deadline);

  const RedisUrl url_;
  const ClientOptions options_;
  std::atomic<std::uint64_t>& round_trips_;
  std::atomic<std::uint64_t> generation_{1};
  std::atomic<bool> stale_{true};  // sentinel: the master must be asked (again) before connecting
  std::mutex mutex_;               // serializes asking the sentinels; guards master_ and next_sentinel_
  RedisUrl master_;
  std::size_t next_sentinel_ = 0;
};

}  // namespace lockbridge::detail
