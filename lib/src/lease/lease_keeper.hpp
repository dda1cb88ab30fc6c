// One renewal thread per Client (not per lock). It keeps every lease the Client's locks hold:
// renews those with a watchdog every lease/3, many locks per pipelined round trip, and tells the
// holder when a lease is lost (a renewal found the key gone or taken over) or runs out (no
// watchdog, a failing server, or the watchdog's max_hold reached).
//
// The thread and its connection (its own, so busy waiters cannot starve renewals of pooled
// connections) start with the first lease tracked.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cluster/router.hpp"
#include "lease/lease.hpp"
#include "observe/event_queue.hpp"
#include "redis/connection.hpp"
#include "redis/endpoint.hpp"
#include "redis/script_runner.hpp"

namespace lockbridge::detail {

class LeaseKeeper {
 public:
  using Clock = std::chrono::steady_clock;
  // Renewals per pipeline: one round trip each, bounded so one reply batch stays small.
  static constexpr std::size_t kBatch = 1000;

  // `events` and `observer` (both null, or both set): where the watchdog's RenewedEvents go.
  LeaseKeeper(std::shared_ptr<Endpoint> endpoint, ScriptCache& scripts, EventQueue* events,
              std::shared_ptr<Observer> observer);
  ~LeaseKeeper();
  LeaseKeeper(const LeaseKeeper&) = delete;
  LeaseKeeper& operator=(const LeaseKeeper&) = delete;

  // Redis Cluster: renewals go to the master serving each key, one pipeline per master per round
  // (through `router`, which must outlive the keeper), instead of to the one endpoint.
  void route_through(ClusterRouter* router) noexcept { router_ = router; }

  // Keeps `lease` until forget() or until it is lost. Cheap: wakes the thread only when this
  // lease needs it sooner than anything it already keeps.
  void keep(const std::shared_ptr<Lease>& lease);
  void forget(const Lease& lease);

  std::uint64_t renewals() const noexcept { return renewals_.load(std::memory_order_relaxed); }
  std::uint64_t renewal_round_trips() const noexcept { return renewal_round_trips_.load(std::memory_order_relaxed); }

 private:
  struct Entry {
    std::shared_ptr<Lease> lease;
    Clock::time_point next_renewal;  // time_point::max() without a watchdog
    bool max_hold_reached = false;   // the last renewal was cut short by watchdog.max_hold
  };
  using Entries = std::unordered_map<const Lease*, Entry>;

  void run() noexcept;
  // With mutex_ held: the leases whose renewal is due (or nearly: batched with the due ones), and
  // the leases past their validity, taken out of entries_. Returns when the first lease still
  // held (kept or due) runs out.
  Clock::time_point collect(Clock::time_point now, std::vector<Entry>& due, std::vector<Entry>& ended);
  Clock::time_point next_event() const;  // with mutex_ held
  // One pipelined round trip for up to kBatch leases; those not renewed are lost or retried. No
  // wait for Redis lasts past `must_end_by` (the first lease end): a stalled link must not keep
  // this thread from telling a holder its lease ran out (docs/design.md §12.2).
  void renew(std::vector<Entry>& batch, Clock::time_point must_end_by);
  // Redis Cluster: the calls through the router, one pipeline per master of their keys' slots;
  // replies in order, null where that master could not be reached or the renewal was redirected
  // (the others' renewals are not held back by it).
  std::vector<ReplyPtr> renew_routed(std::span<const ScriptCall> calls, Clock::time_point must_end_by) noexcept;
  void requeue(Entry entry);
  // A renewal found the key without our value: deleted (absent) or taken (anything else, or when
  // the read fails), asked with one EXISTS on the renewal's path.
  LeaseLossReason why_not_ours(const std::string& key) noexcept;

  const std::shared_ptr<Endpoint> endpoint_;
  ClusterRouter* router_ = nullptr;
  const ClientOptions& options_;  // the endpoint's
  ScriptCache& scripts_;
  EventQueue* const events_;
  const std::shared_ptr<Observer> observer_;

  std::mutex mutex_;
  std::condition_variable changed_;
  Entries entries_;
  Clock::time_point sleeping_until_ = Clock::time_point::max();
  bool stopping_ = false;
  std::thread thread_;

  std::unique_ptr<Connection> connection_;  // the thread's alone
  std::atomic<std::uint64_t> renewals_{0};
  std::atomic<std::uint64_t> renewal_round_trips_{0};
};

}  // namespace lockbridge::detail
