// Redlock: one lock held on a majority of N independent masters (a redlock:// Client), as the
// algorithm at redis.io/docs/latest/develop/use/patterns/distributed-locks describes it. Every
// round is sent to all masters before any reply is read and the replies are awaited together, so
// a round costs the slowest master's round trip, not the sum of them.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lockbridge/lock_info.hpp"
#include "lockbridge/options.hpp"
#include "redis/connection_pool.hpp"
#include "redis/script_runner.hpp"

namespace lockbridge::detail {

// Refuses (Error{bad_option}) what Redlock over independent masters cannot give: the legacy and
// redisson strategies (client clocks and GETSET takeover, or a hash per holder, do not compose
// with votes), and fencing, fair queues, the watchdog and replica_ack (each needs one server that
// orders every owner's commands).
void require_redlock_options(const MutexOptions& options);

class Quorum {
 public:
  using Clock = std::chrono::steady_clock;

  // `masters` (the Client's, in URL order) and `scripts` must outlive the Quorum.
  Quorum(std::span<const std::unique_ptr<ConnectionPool>> masters, ScriptCache& scripts);

  int size() const noexcept { return static_cast<int>(masters_.size()); }
  int majority() const noexcept { return size() / 2 + 1; }

  // The clock drift Redlock allows for: 1% of the lease plus 2 ms (for the timers' resolution).
  static std::chrono::milliseconds drift(std::chrono::milliseconds lease) noexcept;

  struct Outcome {
    bool held = false;  // a majority voted, and time was left
    int votes = 0;      // masters that hold our value (set or extended)
    // How long the lock is safe to use, counted from when the round was sent:
    // lease - elapsed - drift. Zero when not held.
    std::chrono::milliseconds validity{0};
    // Not held, when asked for: the shortest remaining lease among the masters that hold another
    // owner's value (the soonest a vote can free up).
    std::optional<std::chrono::milliseconds> holder_remaining;
  };

  // SET key value NX PX lease GET on every master. Without a majority in time, whatever was set is
  // deleted again before returning. Throws Error{no_quorum} when too few masters answered for a
  // majority to be possible (naming each failure), Error{wrong_type} when the key has another type
  // on enough masters to block a majority.
  // With `learn_remaining`, PTTL rides along to each master in the same round. No wait for a
  // master's pooled connection runs past `deadline` (that master then counts as failed).
  Outcome acquire(std::string_view key, const std::string& value, std::chrono::milliseconds lease,
                  bool learn_remaining = false, Clock::time_point deadline = Clock::time_point::max());

  // Sets our value's TTL to `lease` on every master that still holds it. Without a majority in time
  // the lock is over: our value is deleted everywhere and held is false.
  Outcome extend(std::string_view key, const std::string& value, std::chrono::milliseconds lease);

  // Deletes our value (only ours) from every master it can reach; the number that held it.
  // Throws Error{no_quorum} when no master answered.
  int release(std::string_view key, const std::string& value);

  // The value a majority of masters holds (exists is false without one), with the shortest TTL
  // among them.
  LockInfo inspect(std::string_view key, std::string_view my_value);

 private:
  // What one master answered to a round: its replies, or why it gave none.
  struct Answer {
    std::vector<ReplyPtr> replies;
    std::string failure;  // empty when replies holds one reply per command
  };
  // Sends `commands` (pipelined) to each master in `which` (all when empty), then waits for all the
  // replies at once, up to the command timeout. A master's connection is waited for (when its pool
  // is busy) up to `deadline` at most (ConnectionPool::borrow).
  std::vector<Answer> round(std::span<const std::vector<std::string_view>> commands,
                            std::vector<std::size_t> which = {}, Clock::time_point deadline = Clock::time_point::max());
  // One script on every master: EVALSHA, then EVAL on the masters that answered NOSCRIPT.
  std::vector<Answer> script_round(const Script& script, std::string_view key, std::span<const std::string_view> args);
  void delete_ours(std::string_view key, const std::string& value) noexcept;
  std::string failures_text(const std::vector<Answer>& answers) const;

  std::span<const std::unique_ptr<ConnectionPool>> masters_;
  ScriptCache& scripts_;
};

}  // namespace lockbridge::detail
