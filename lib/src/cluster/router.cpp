#include "cluster/router.hpp"

#include <algorithm>
#include <optional>
#include <thread>

#include "cluster/cluster_nodes.hpp"
#include "cluster/redirect_loop.hpp"
#include "lockbridge/error.hpp"

namespace lockbridge::detail {

namespace {
// A refresh that a redirect or a failed connection asked for waits at least this long after the
// last one, so a cluster in the middle of a failover is not asked by every lock attempt.
constexpr std::chrono::milliseconds kRefreshInterval{100};

std::string address(const NodeAddress& node) { return node.host + ":" + std::to_string(node.port); }
}  // namespace

ClusterRouter::ClusterRouter(const RedisUrl& url, const ClientOptions& options, std::atomic<std::uint64_t>& round_trips)
    : url_(url), options_(options), round_trips_(round_trips) {}

ClusterRouter::~ClusterRouter() {
  // The notifiers' threads call back into the router (on_redirect): stop them first.
  nodes_.clear();
}

RedisUrl ClusterRouter::server(const NodeAddress& node) const {
  return url_.server(RedisUrl::Node{node.host, node.port});
}

ClusterRouter::Node& ClusterRouter::node(const NodeAddress& address) {
  std::lock_guard lock(mutex_);
  auto& slot = nodes_[address];
  if (!slot) {
    slot = std::make_unique<Node>(std::make_shared<Endpoint>(server(address), options_, round_trips_));
    // A subscription this node answers MOVED teaches the map, as a command's redirect does.
    slot->notifier.on_redirect([this, address](const Redirect& redirect) { learn_moved(redirect, address); });
  }
  return *slot;
}

void ClusterRouter::forget_unreachable(const NodeAddress& node) {
  std::lock_guard lock(mutex_);
  unreachable_.erase(node);  // a connection to it works again (a blip, not a failover)
}

void ClusterRouter::schedule_refresh(const NodeAddress& failed) noexcept {
  std::lock_guard lock(mutex_);
  refresh_due_ = true;
  try {
    unreachable_.insert(failed);
  } catch (...) {  // out of memory: the refresh may then believe a stale map a little longer
  }
}

NodeAddress ClusterRouter::master_of(std::uint16_t slot) {
  std::unique_lock lock(mutex_);
  const bool known = map_.master_of(slot).has_value();
  if (!known || (refresh_due_ && Clock::now() - last_refresh_ >= kRefreshInterval)) {
    try {
      refresh(lock);
    } catch (const Error&) {
      if (!known) throw;  // otherwise the map we have is the best guess; a redirect corrects it
    }
  }
  const auto master = map_.master_of(slot);
  if (!master) throw no_master(slot);
  return *master;
}

SlotMap ClusterRouter::read_slot_map(Connection& connection, const NodeAddress& asked) {
  const ReplyPtr nodes = connection.run({"CLUSTER", "NODES"});
  if (nodes->type == REDIS_REPLY_STRING) return slot_map_from_cluster_nodes(as_view(*nodes), asked);
  if (nodes->type != REDIS_REPLY_ERROR) unexpected_reply(*nodes, "the node table", "CLUSTER NODES");
  // Some managed services rename or forbid CLUSTER NODES; CLUSTER SLOTS has no epochs but names
  // each slot's master as the asked node sees it.
  const ReplyPtr slots = connection.run({"CLUSTER", "SLOTS"});
  return SlotMap(to_public_reply(*slots), asked);
}

void ClusterRouter::refresh(std::unique_lock<std::mutex>& lock) {
  if (refreshing_) {
    // Another caller reads the map now: its outcome is this one's too.
    const std::uint64_t generation = refreshes_;
    refreshed_.wait(lock, [&] { return refreshes_ != generation; });
    if (refresh_failure_) throw *refresh_failure_;
    return;
  }
  refreshing_ = true;
  last_refresh_ = Clock::now();
  // Masters we know answer first; the seed nodes of the URL are the fallback (and the start).
  std::vector<NodeAddress> candidates = map_.masters();
  for (const RedisUrl::Node& seed : url_.nodes) {
    const NodeAddress node{seed.host, seed.port};
    if (std::find(candidates.begin(), candidates.end(), node) == candidates.end()) candidates.push_back(node);
  }
  std::set<NodeAddress> unreachable = unreachable_;
  // The nodes are asked without the lock: the event-driven front asks the map on its loop, which
  // must not wait for connects.
  lock.unlock();
  // Right after a failover only the promoted replica may know it is master; the other nodes go on
  // naming the dead one for a while. A map that names a master we could not reach is kept only
  // when no node offers a better one.
  const auto names_unreachable = [&](const SlotMap& map) {
    return std::any_of(map.masters().begin(), map.masters().end(),
                       [&](const NodeAddress& master) { return unreachable.contains(master); });
  };
  std::optional<SlotMap> trusted;
  std::optional<SlotMap> fallback;
  std::set<NodeAddress> answered;
  std::set<NodeAddress> failed;
  std::string failures;
  try {
    for (const NodeAddress& candidate : candidates) {
      try {
        Connection connection(server(candidate), options_, round_trips_);
        SlotMap fresh = read_slot_map(connection, candidate);
        answered.insert(candidate);
        unreachable.erase(candidate);  // it answered
        if (!names_unreachable(fresh)) {
          trusted = std::move(fresh);
          break;
        }
        if (!fallback) fallback = std::move(fresh);
      } catch (const Error& error) {
        failed.insert(candidate);
        unreachable.insert(candidate);
        failures += "; " + address(candidate) + ": " + message_of(error);
      }
    }
  } catch (...) {  // out of memory: the map stays, and the callers waiting are let go
    lock.lock();
    finish_refresh(Error(Errc::io, "read the slot map of " + url_.redacted() + ": out of memory"));
    throw;
  }
  lock.lock();
  if (trusted) {
    map_ = std::move(*trusted);
    unreachable_.clear();
    refresh_due_ = false;
    finish_refresh(std::nullopt);
    return;
  }
  for (const NodeAddress& node : answered) unreachable_.erase(node);
  unreachable_.insert(failed.begin(), failed.end());
  if (fallback) {
    map_ = std::move(*fallback);  // the best there is; refreshed again on the next failure
    finish_refresh(std::nullopt);
    return;
  }
  Error failure(Errc::io, "no node of " + url_.redacted() + " answered CLUSTER NODES" + failures);
  finish_refresh(failure);
  throw failure;
}

void ClusterRouter::finish_refresh(std::optional<Error> failure) noexcept {
  refresh_failure_ = std::move(failure);
  refreshing_ = false;
  ++refreshes_;
  refreshed_.notify_all();
}

std::vector<NodeAddress> ClusterRouter::masters() {
  std::unique_lock lock(mutex_);
  refresh(lock);
  return map_.masters();
}

ReleaseNotifier& ClusterRouter::notifier_for(std::uint16_t slot) {
  // The map as it is, not read again when due: a waiter subscribes after an attempt that routed to
  // the slot (a MOVED it met has updated the map already), and an event-driven waiter subscribes
  // on its loop, which must not wait for a read. A subscription on a master the slot left is
  // answered MOVED, and the listener subscribes again where that points.
  if (const auto master = mapped_master(slot)) return node(*master).notifier;
  return node(master_of(slot)).notifier;
}

namespace {
// The blocking front's hops: a connection borrowed from the node's pool, the operation run in
// place on it, a sleep between tries.
class BlockingHops final : public ClusterHops {
 public:
  BlockingHops(ClusterRouter& router, std::function<ConnectionPool&(const NodeAddress&)> pool_of,
               const ClusterRouter::Operation& operation, Clock::time_point deadline)
      : router_(router), pool_of_(std::move(pool_of)), operation_(operation), deadline_(deadline) {}
  Task<NodeAddress> master_of(std::uint16_t slot) override { co_return router_.master_of(slot); }
  Task<std::optional<Error>> reach(const NodeAddress& node) override {
    connection_.reset();
    try {
      connection_.emplace(pool_of_(node).borrow(deadline_));
    } catch (const Error& error) {
      co_return error;
    }
    co_return std::nullopt;
  }
  Task<void> run(bool asking, RedirectNote& note) override {
    try {
      Connection& used = **connection_;
      const RedirectWatch watch(used, asking, note);
      operation_(used);
    } catch (...) {
      // Back to its pool now: the next step may read the map (seconds, in a failover) and this
      // client's other threads may want the connection meanwhile.
      connection_.reset();
      throw;
    }
    co_return;
  }
  Task<void> pause(Clock::duration pause) override {
    std::this_thread::sleep_for(pause);
    co_return;
  }

 private:
  ClusterRouter& router_;
  const std::function<ConnectionPool&(const NodeAddress&)> pool_of_;
  const ClusterRouter::Operation& operation_;
  const Clock::time_point deadline_;
  std::optional<ConnectionPool::PooledConnection> connection_;
};
}  // namespace

void ClusterRouter::route(std::uint16_t slot, const Operation& operation, Clock::time_point deadline) {
  BlockingHops hops(
      *this, [this](const NodeAddress& address) -> ConnectionPool& { return node(address).pool; }, operation,
      deadline);
  follow_redirects(*this, slot, hops, deadline).run_now();
}

std::optional<NodeAddress> ClusterRouter::master_if_current(std::uint16_t slot) {
  std::lock_guard lock(mutex_);
  const auto master = map_.master_of(slot);
  if (!master || (refresh_due_ && Clock::now() - last_refresh_ >= kRefreshInterval)) return std::nullopt;
  return master;
}

std::optional<NodeAddress> ClusterRouter::mapped_master(std::uint16_t slot) {
  std::lock_guard lock(mutex_);
  return map_.master_of(slot);
}

void ClusterRouter::read_map() {
  std::unique_lock lock(mutex_);
  refresh(lock);
}

Error ClusterRouter::no_master(std::uint16_t slot) const {
  return Error(Errc::io, "no master of " + url_.redacted() + " serves hash slot " + std::to_string(slot) +
                             " (the cluster is failing over or not fully set up)");
}

NodeAddress ClusterRouter::destination(const Redirect& redirect, const NodeAddress& sender) {
  NodeAddress to = redirect.to;
  if (to.host.empty()) to.host = sender.host;  // Redis 7: "MOVED 1 :7000" is the sender's host
  return to;
}

void ClusterRouter::learn_moved(const Redirect& redirect, const NodeAddress& sender) {
  const NodeAddress to = destination(redirect, sender);
  std::lock_guard lock(mutex_);
  map_.move(redirect.slot, to);
  refresh_due_ = true;  // one slot moved: others may have too
}

}  // namespace lockbridge::detail
