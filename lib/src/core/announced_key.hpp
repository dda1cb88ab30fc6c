// A key whose changes are announced on a channel of their own, as Redisson's latch and semaphore
// are: the key, the channel, and how to publish and listen there on this Client's topology (SPUBLISH
// and SSUBSCRIBE on Redis Cluster, as Redisson >= 3.22 does there; PUBLISH and SUBSCRIBE on one
// server). What the objects that are not locks (Latch, Semaphore) share.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "lockbridge/client.hpp"
#include "core/routes.hpp"
#include "lockbridge/options.hpp"
#include "redis/client_state.hpp"
#include "waiting/release_channel.hpp"

namespace lockbridge::detail {

struct AnnouncedKey {
  std::string key;
  ReleaseChannel channel;  // payloads name nobody: every waiter hears every announcement
  Client client;  // a copy: it shares the pool and the notifier

  ClientState& state() const noexcept { return *client.state(); }
  const char* publish_command() const noexcept { return channel.sharded ? "SPUBLISH" : "PUBLISH"; }
  // The blocking front's call of one of the key's operations (core/latch_calls.hpp and the
  // like): `operation(routes, *this)` run in place on a pooled connection, its result or what it threw.
  template <class Operation>
  auto in_place(Operation operation) const {
    BlockingRoutes routes(state());
    return operation(static_cast<Routes&>(routes), *this).run_now();
  }
};

// Throws Error{bad_option} (naming `front`, e.g. "Latch") for an empty key, a Redlock Client (no
// single server holds the count), and on Redis Cluster a channel outside the key's slot (a key
// with a brace but no usable hash tag), which the key's scripts could not announce on.
// `sharding`: the Java fleet's shardedSubscriptionMode.
AnnouncedKey announced_key(const Client& client, std::string key, std::string channel, std::string_view front,
                           ShardedSubscription sharding);

}  // namespace lockbridge::detail
