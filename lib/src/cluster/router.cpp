#include "cluster/router.hpp"

#include <algorithm>
#include <optional>
#include <thread>

#include "cluster/cluster_nodes.hpp"
#include "cluster/redirect_watch.hpp"
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
  std::lock_guard lock(mutex_);
  const bool known = map_.master_of(slot).has_value();
  if (!known || (refresh_due_ && Clock::now() - last_refresh_ >= kRefreshInterval)) {
    try {
      refresh();
    } catch (const Error&) {
      if (!known) throw;  // otherwise the map we have is the best guess; a redirect corrects it
    }
  }
  const auto master = map_.master_of(slot);
  if (!master) {
    throw Error(Errc::io, "no master of " + url_.redacted() + " serves hash slot " + std::to_string(slot) +
                              " (the cluster is failing over or not fully set up)");
  }
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

void ClusterRouter::refresh() {
  last_refresh_ = Clock::now();
  // Masters we know answer first; the seed nodes of the URL are the fallback (and the start).
  std::vector<NodeAddress> candidates = map_.masters();
  for (const RedisUrl::Node& seed : url_.nodes) {
    const NodeAddress node{seed.host, seed.port};
    if (std::find(candidates.begin(), candidates.end(), node) == candidates.end()) candidates.push_back(node);
  }
  // Right after a failover only the promoted replica may know it is master; the other nodes go on
  // naming the dead one for a while. A map that names a master we could not reach is kept only
  // when no node offers a better one.
  const auto names_unreachable = [&](const SlotMap& map) {
    return std::any_of(map.masters().begin(), map.masters().end(),
                       [&](const NodeAddress& master) { return unreachable_.contains(master); });
  };
  std::optional<SlotMap> fallback;
  std::string failures;
  for (const NodeAddress& candidate : candidates) {
    try {
      Connection connection(server(candidate), options_, round_trips_);
      SlotMap fresh = read_slot_map(connection, candidate);
      unreachable_.erase(candidate);  // it answered
      if (!names_unreachable(fresh)) {
        map_ = std::move(fresh);
        unreachable_.clear();
        refresh_due_ = false;
        return;
      }
      if (!fallback) fallback = std::move(fresh);
    } catch (const Error& error) {
      unreachable_.insert(candidate);
      failures += "; " + address(candidate) + ": " + message_of(error);
    }
  }
  if (fallback) {
    map_ = std::move(*fallback);  // the best there is; refreshed again on the next failure
    return;
  }
  throw Error(Errc::io, "no node of " + url_.redacted() + " answered CLUSTER NODES" + failures);
}

std::vector<NodeAddress> ClusterRouter::masters() {
  std::lock_guard lock(mutex_);
  refresh();
  return map_.masters();
}

ReleaseNotifier& ClusterRouter::notifier_for(std::uint16_t slot) { return node(master_of(slot)).notifier; }

void ClusterRouter::route(std::uint16_t slot, const Operation& operation, Clock::time_point deadline) {
  std::optional<NodeAddress> asking;  // an ASK redirect's node, for the next try only
  for (int redirects = 0;; ++redirects) {
    const NodeAddress target = asking ? *asking : master_of(slot);
    Node& at = node(target);
    std::optional<ConnectionPool::PooledConnection> connection;
    try {
      connection.emplace(at.pool.borrow(deadline));
    } catch (const Error&) {
      schedule_refresh(target);  // the master may be gone, and a replica promoted in its place
      // Nothing was sent. When the refreshed map names another master for the slot (a replica
      // promoted while this Client was idle), the operation goes there instead of failing.
      if (asking || redirects >= kMaxRedirects || master_of(slot) == target) throw;
      continue;
    }
    Connection& used = **connection;
    forget_unreachable(target);
    const RedirectWatch watch(used, asking.has_value());
    std::optional<Redirect> redirect;
    try {
      operation(used);
      // The operation succeeded; a redirect it read past (a pipelined reply it could do without)
      // still teaches the map. The operation is not repeated.
      redirect = watch.redirect();
      if (redirect && redirect->kind == Redirect::Kind::moved) learn_moved(*redirect, target);
      return;
    } catch (const Error& error) {
      redirect = watch.redirect();
      if (!redirect && watch.try_again() && redirects < kMaxRedirects) {
        // The slot's keys are moving in batches: wait for this batch (10, 20, 40 ... ms), then
        // ask the slot's owner again; never past the caller's deadline.
        const auto now = Clock::now();
        if (now >= deadline) {
          throw Error(error.errc(), message_of(error) + " (the caller's deadline came before the migration ended)");
        }
        const auto wait = std::chrono::milliseconds(10) * (1 << redirects);
        std::this_thread::sleep_for(deadline - now < wait ? deadline - now : Clock::duration(wait));
        asking.reset();
        continue;
      }
      if (!redirect) {
        if (error.errc() == Errc::io || error.errc() == Errc::timeout) schedule_refresh(target);
        throw;
      }
      if (redirects >= kMaxRedirects) {
        throw Error(Errc::protocol, message_of(error) + " (still redirected after " + std::to_string(kMaxRedirects) +
                                        " redirects; the cluster keeps moving the slot)");
      }
    }
    if (redirect->kind == Redirect::Kind::ask) {
      asking = destination(*redirect, target);
    } else {
      asking.reset();
      learn_moved(*redirect, target);
    }
  }
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
