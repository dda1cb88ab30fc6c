// Redlock: one lock held on a majority of N independent masters (a redlock:// Client), as the
// algorithm at redis.io/docs/latest/develop/use/patterns/distributed-locks describes it. Every
// round is sent to all masters before any reply is read and the replies are awaited together, so
// a round costs the slowest master's round trip, not the sum of them. The algorithm is written
// once, as coroutines over QuorumRounds, which each front implements: the blocking front's over
// pooled connections and poll(2) (redlock/pooled_rounds.hpp), the event-driven front's over a
// pipeline per master on the program's loop (redlock/pipelined_rounds.hpp).
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
#include "redis/reply.hpp"
#include "redis/script_runner.hpp"
#include "util/task.hpp"

namespace lockbridge::detail {

// What one master answered to a round: its replies, or why it gave none.
struct QuorumAnswer {
  std::vector<ReplyPtr> replies;
  std::string failure;  // empty when replies holds one reply per command
};

// How a front sends one round to the masters.
class QuorumRounds {
 public:
  using Clock = std::chrono::steady_clock;
  virtual ~QuorumRounds() = default;
  virtual int size() const noexcept = 0;
  // Sends `commands` (pipelined) to each master in `which` (all when empty), then waits for all
  // the replies at once, up to the command timeout; the answers are indexed by master (those not
  // asked stay empty). No wait for a master's connection runs past `deadline` (that master then
  // counts as failed). The commands must live until the round ends.
  virtual Task<std::vector<QuorumAnswer>> round(std::span<const std::vector<std::string_view>> commands,
                                                std::vector<std::size_t> which, Clock::time_point deadline) = 0;
};

// Refuses (Error{bad_option}) what Redlock over independent masters cannot give: the legacy and
// redisson strategies (client clocks and GETSET takeover, or a hash per holder, do not compose
// with votes), and fencing, fair queues, the watchdog and replica_ack (each needs one server that
// orders every holder's commands).
void require_redlock_options(const MutexOptions& options);

class Quorum {
 public:
  using Clock = std::chrono::steady_clock;

  // `rounds` (the Client's masters, in URL order, as the front reaches them) and `scripts` must
  // outlive the Quorum. Its calls are coroutines: their arguments must live until they end.
  Quorum(QuorumRounds& rounds, ScriptCache& scripts) noexcept : rounds_(rounds), scripts_(scripts) {}

  int size() const noexcept { return rounds_.size(); }
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
  Task<Outcome> acquire(std::string_view key, const std::string& value, std::chrono::milliseconds lease,
                        bool learn_remaining = false, Clock::time_point deadline = Clock::time_point::max());

  // Sets our value's TTL to `lease` on every master that still holds it. Without a majority in time
  // the lock is over: our value is deleted everywhere and held is false.
  Task<Outcome> extend(std::string_view key, const std::string& value, std::chrono::milliseconds lease);

  // Deletes our value (only ours) from every master it can reach; the number that held it.
  // Throws Error{no_quorum} when no master answered.
  Task<int> release(std::string_view key, const std::string& value);

  // The value a majority of masters holds (exists is false without one), with the shortest TTL
  // among them.
  Task<LockInfo> inspect(std::string_view key, std::string_view my_value);

 private:
  using Answer = QuorumAnswer;
  // A round to the masters in `which` (every one when empty).
  Task<std::vector<Answer>> round(std::span<const std::vector<std::string_view>> commands,
                                  const std::vector<std::size_t>& which,
                                  Clock::time_point deadline = Clock::time_point::max()) {
    return rounds_.round(commands, which, deadline);
  }
  // One script on every master: EVALSHA, then EVAL on the masters that answered NOSCRIPT.
  Task<std::vector<Answer>> script_round(const Script& script, std::string_view key,
                                         std::span<const std::string_view> args);
  // Best effort: never throws.
  Task<void> delete_ours(std::string_view key, const std::string& value);
  std::string failures_text(const std::vector<Answer>& answers) const;

  QuorumRounds& rounds_;
  ScriptCache& scripts_;
};

}  // namespace lockbridge::detail
