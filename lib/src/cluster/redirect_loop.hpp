// How one operation on Redis Cluster reaches the master serving its key's slot, written once for
// both fronts: each says how it takes the steps (ClusterHops: a pooled connection and a sleep for
// the blocking front, a pipeline and a loop timer for the event-driven one), and
// follow_redirects() decides where to go next. When the operation failed on a redirect (it did not
// run), it follows it: MOVED updates the map (and a full refresh follows), ASK sends it once more,
// after ASKING, to the node importing the slot. After TRYAGAIN (keys split by a migration) it
// waits a little and runs it again, never past the caller's deadline. A connection that fails
// schedules a refresh of the map, since the master may have failed over; when it could not even be
// made (nothing was sent) and the refreshed map names another master, the operation goes there.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "cluster/node_address.hpp"
#include "cluster/redirect_watch.hpp"
#include "lockbridge/error.hpp"
#include "util/task.hpp"

namespace lockbridge::detail {

class ClusterRouter;

class ClusterHops {
 public:
  using Clock = std::chrono::steady_clock;
  virtual ~ClusterHops() = default;
  // The master serving `slot` by the map (read first when due). Throws Error{io} when none does.
  virtual Task<NodeAddress> master_of(std::uint16_t slot) = 0;
  // A connection to `node` for the next run(); the Error when none could be had (nothing was sent).
  virtual Task<std::optional<Error>> reach(const NodeAddress& node) = 0;
  // Runs the operation on the connection reach() found (after ASKING, when `asking`), noting what
  // the replies said in `note`. Throws what the operation throws.
  virtual Task<void> run(bool asking, RedirectNote& note) = 0;
  // Waits `pause` before the next try.
  virtual Task<void> pause(Clock::duration pause) = 0;
};

// Runs the operation through `hops` on the master serving `slot`, as above. Throws what the
// operation throws, Error{io} when no master serves the slot, Error{protocol} after
// ClusterRouter::kMaxRedirects.
Task<void> follow_redirects(ClusterRouter& router, std::uint16_t slot, ClusterHops& hops,
                            ClusterHops::Clock::time_point deadline);

}  // namespace lockbridge::detail
