// How a lock target reaches the server that holds a key, for one operation: a Link to it. The
// blocking front's routes borrow a pooled connection (on Redis Cluster the master of the key's
// slot, redirects followed) for the operation and run it in place; the event-driven front's give
// the pipeline to that server. Targets are written once against this, as coroutines.
#pragma once

#include <chrono>
#include <functional>
#include <string_view>

#include "redis/client_state.hpp"
#include "redis/link.hpp"
#include "util/task.hpp"

namespace lockbridge::detail {

class Routes {
 public:
  using Clock = std::chrono::steady_clock;
  using Operation = std::function<Task<void>(Link&)>;
  virtual ~Routes() = default;

  // Runs `operation` on a link to the server serving `key` (the caller keeps it alive until the
  // task ends: it is not copied, as every lock call passes one). It may run again after a cluster
  // redirect (it failed there without running), so it must be safe to repeat. No wait of the
  // route's own (a free pooled connection, a sentinel, a TRYAGAIN) runs past `deadline`.
  // Throws what the operation throws, and Error for a server that cannot be reached.
  virtual Task<void> on_link(std::string_view key, const Operation& operation, Clock::time_point deadline) = 0;
};

// The blocking front's: ClientState::with_connection, the operation run in place.
class BlockingRoutes final : public Routes {
 public:
  explicit BlockingRoutes(ClientState& state) noexcept : state_(state) {}
  Task<void> on_link(std::string_view key, const Operation& operation, Clock::time_point deadline) override {
    state_.with_connection(
        key,
        [&](Connection& connection) {
          BlockingLink link(connection);
          operation(link).run_now();
        },
        deadline);
    co_return;
  }

 private:
  ClientState& state_;
};

}  // namespace lockbridge::detail
