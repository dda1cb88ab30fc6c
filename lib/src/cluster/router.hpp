// Redis Cluster for a redis-cluster:// Client: which master serves a key's hash slot (from CLUSTER
// NODES, or CLUSTER SLOTS where that is refused, asked of a known master or a seed node), a
// connection pool per master, and what the redirects of a cluster that changes under the Client
// teach the map (cluster/redirect_loop.hpp follows them, for both fronts).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "cluster/node_address.hpp"
#include "cluster/redirect.hpp"
#include "cluster/slot_map.hpp"
#include "lockbridge/error.hpp"
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

  // Runs `operation` on a pooled connection to the master serving `slot`, following redirects as
  // cluster/redirect_loop.hpp says (it must be safe to repeat: a redirected command did not run);
  // no wait for a pooled connection or after a TRYAGAIN runs past `deadline`. Throws what the
  // operation throws, Error{io} when no master serves the slot, Error{protocol} after kMaxRedirects.
  void route(std::uint16_t slot, const Operation& operation, Clock::time_point deadline = Clock::time_point::max());

  // The master serving `slot` by the map (read first when due). Throws Error{io} when none does.
  NodeAddress master_of(std::uint16_t slot);

  // For the event-driven front, which reads the map off its loop: the master serving `slot` when
  // the map knows it and no read is due (nullopt: read_map() first); the map's master, read or not
  // (nullopt: none); a read of the map now (Error{io} when no node answered); and the Error that
  // says no master serves `slot`.
  std::optional<NodeAddress> master_if_current(std::uint16_t slot);
  std::optional<NodeAddress> mapped_master(std::uint16_t slot);
  void read_map();
  Error no_master(std::uint16_t slot) const;

  // The masters serving slots now, read afresh from the cluster.
  std::vector<NodeAddress> masters();

  // A single-server URL for `node`, with the Client's credentials.
  RedisUrl server(const NodeAddress& node) const;

  // The release notifier on the master serving `slot` (sharded pub/sub is heard only there), by
  // the map as it is (read only when it does not know the slot).
  ReleaseNotifier& notifier_for(std::uint16_t slot);

  // Where `node` is reached, with the Client's options (the event-driven front's pipelines
  // connect there).
  std::shared_ptr<Endpoint> endpoint_of(const NodeAddress& node) { return this->node(node).endpoint; }

  // What cluster/redirect_loop.hpp tells the map: a connection to `failed` failed (a refresh is due,
  // and maps naming it are distrusted), one to `node` works, a MOVED redirect `sender` answered.
  void schedule_refresh(const NodeAddress& failed) noexcept;
  void forget_unreachable(const NodeAddress& node);
  void learn_moved(const Redirect& redirect, const NodeAddress& sender);
  // Where a redirect sends the operation (an empty host is the sender's).
  static NodeAddress destination(const Redirect& redirect, const NodeAddress& sender);

 private:
  struct Node {
    std::shared_ptr<Endpoint> endpoint;
    ConnectionPool pool;
    ReleaseNotifier notifier;
    explicit Node(std::shared_ptr<Endpoint> at) : endpoint(at), pool(at), notifier(at) {}
  };

  Node& node(const NodeAddress& address);  // created on first use; never removed
  // Reads the map from the nodes (with `lock` held on entry and on return, released while the
  // nodes are asked); one read at a time: a caller that finds one under way takes its outcome.
  // Throws Error{io} when no node answered (the map stays).
  void refresh(std::unique_lock<std::mutex>& lock);
  void finish_refresh(std::optional<Error> failure) noexcept;  // with mutex_ held
  // CLUSTER NODES (with config epochs), or CLUSTER SLOTS where the former is refused.
  static SlotMap read_slot_map(Connection& connection, const NodeAddress& asked);

  const RedisUrl url_;
  const ClientOptions options_;
  std::atomic<std::uint64_t>& round_trips_;
  std::mutex mutex_;  // guards everything below; not held while a refresh asks the nodes
  SlotMap map_;
  std::map<NodeAddress, std::unique_ptr<Node>> nodes_;
  bool refresh_due_ = true;
  std::set<NodeAddress> unreachable_;  // nodes a connection failed to since the last good refresh
  Clock::time_point last_refresh_{};
  bool refreshing_ = false;                // a refresh is asking the nodes
  std::uint64_t refreshes_ = 0;            // refreshes ended
  std::optional<Error> refresh_failure_;   // the last one's, for the callers that waited for it
  std::condition_variable refreshed_;
};

}  // namespace lockbridge::detail
