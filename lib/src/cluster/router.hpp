// Redis Cluster for a redis-cluster:// Client: which master serves a key's hash slot (from CLUSTER
// NODES, or CLUSTER SLOTS where that is refused, asked of a known master or a seed node), a
// connection pool per master, and the redirects of a cluster that changes under the Client: MOVED
// updates the map (and a full refresh follows), ASK sends the command once more, after ASKING, to
// the node importing the slot.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string_view>
#include <vector>

#include "cluster/node_address.hpp"
#include "cluster/redirect.hpp"
#include "cluster/slot_map.hpp"
#include "redis/connection_pool.hpp"
#include "waiting/release_notifier.hpp"

namespace lockbridge::detail {

class ClusterRouter {
 public:
  // Redirects (and TRYAGAIN waits) for one operation before it fails: a slot moving back and
  // forth, or nodes that disagree for longer than that, is not waited out here.
  static constexpr int kMaxRedirects = 5;

  // Does no I/O: the slot map is read on first use.
  ClusterRouter(const RedisUrl& url, const ClientOptions& options, std::atomic<std::uint64_t>& round_trips);
  ~ClusterRouter();
  ClusterRouter(const ClusterRouter&) = delete;
  ClusterRouter& operator=(const ClusterRouter&) = delete;

  using Operation = std::function<void(Connection&)>;
  using Clock = std::chrono::steady_clock;

  // Runs `operation` on a connection to the master serving `slot`. When it throws and the reply it
  // failed on was a redirect, follows the redirect and runs it again (it must be safe to repeat:
  // a redirected command did not run); after TRYAGAIN (keys split by a migration) it waits a
  // little and runs it again, unless that wait would pass `deadline` (then only until it; once it
  // has passed, the TRYAGAIN is thrown). A connection that fails schedules a refresh of the map,
  // since the master may have failed over; when it could not even be made (nothing was sent) and
  // the refreshed map names another master, the operation runs there. Throws what the operation
  // throws, Error{io} when no master serves the slot, Error{protocol} after kMaxRedirects.
  void route(std::uint16_t slot, const Operation& operation, Clock::time_point deadline = Clock::time_point::max());

  // The master serving `slot` by the map (read first when due). Throws Error{io} when none does.
  NodeAddress master_of(std::uint16_t slot);

  // The masters serving slots now, read afresh from the cluster.
  std::vector<NodeAddress> masters();

  // A single-server URL for `node`, with the Client's credentials.
  RedisUrl server(const NodeAddress& node) const;

  // The release notifier on the master serving `slot` (sharded pub/sub is heard only there).
  ReleaseNotifier& notifier_for(std::uint16_t slot);

 private:
  struct Node {
    std::shared_ptr<Endpoint> endpoint;
    ConnectionPool pool;
    ReleaseNotifier notifier;
    explicit Node(std::shared_ptr<Endpoint> at) : endpoint(at), pool(at), notifier(at) {}
  };

  Node& node(const NodeAddress& address);  // created on first use; never removed
  void refresh();                          // with mutex_ held
  // CLUSTER NODES (with config epochs), or CLUSTER SLOTS where the former is refused.
  static SlotMap read_slot_map(Connection& connection, const NodeAddress& asked);
  void schedule_refresh(const NodeAddress& failed) noexcept;
  void forget_unreachable(const NodeAddress& node);
  static NodeAddress destination(const Redirect& redirect, const NodeAddress& sender);
  void learn_moved(const Redirect& redirect, const NodeAddress& sender);

  const RedisUrl url_;
  const ClientOptions options_;
  std::atomic<std::uint64_t>& round_trips_;
  std::mutex mutex_;  // guards everything below; held across a refresh (rare, and bounded by timeouts)
  SlotMap map_;
  std::map<NodeAddress, std::unique_ptr<Node>> nodes_;
  bool refresh_due_ = true;
  std::set<NodeAddress> unreachable_;  // nodes a connection failed to since the last good refresh
  Clock::time_point last_refresh_{};
};

}  // namespace lockbridge::detail
