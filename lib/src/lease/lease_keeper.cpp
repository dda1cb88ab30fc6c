#include "lease/lease_keeper.hpp"

#include "cluster/key_slot.hpp"

#include <algorithm>
#include <map>
#include <span>

#include "strategies/strategy.hpp"
#include "util/background_thread.hpp"

namespace lockbridge::detail {

namespace {
using std::chrono::milliseconds;

// A renewal that could not be sent (server unreachable, holder busy on the lease) is tried again
// this soon: a tenth of the lease, so several tries fit before it runs out (a quarter of what is
// left of a shorter lease held now: a grant's, docs/design.md §10.6).
milliseconds retry_delay(const Lease& lease) {
  const auto left = std::chrono::floor<milliseconds>(lease.snapshot().valid_until - Lease::Clock::now());
  return std::max(milliseconds(1), std::min(lease.renewal->lease / 10, left / 4));
}

Error ran_out(const Lease& lease, bool max_hold_reached) {
  std::string why = "the lease ran out";
  if (!lease.renewal || lease.renewal->once) {
    why += " (no watchdog renews it)";
  } else if (max_hold_reached) {
    why += ": held longer than watchdog.max_hold, so the watchdog stopped renewing it";
  } else {
    why += " before a renewal succeeded (is the server reachable?)";
  }
  return Error(Errc::lease_lost, describe("lease of", lease.key) + ": " + why);
}

// When to renew a lease renewed at `now` for `asked`: a third of it later. A renewal that max_hold
// cut short has carried the lease to the hold's deadline, and later ones only check that the lock
// is still ours, at the usual cadence (a third of the full lease), the last one at least that long
// before the deadline: a third of an ever shorter lease asked again some two hundred times in the
// last milliseconds.
Lease::Clock::time_point next_renewal(const Lease& lease, Lease::Clock::time_point now, milliseconds asked) {
  const milliseconds cadence = lease.renewal->lease / 3;
  if (asked >= lease.renewal->lease) return now + asked / 3;
  if (now + 2 * cadence > lease.renewal->hold_deadline) return Lease::Clock::time_point::max();
  return now + cadence;
}

LeaseLossReason ran_out_reason(const Lease& lease, bool max_hold_reached) {
  return !lease.renewal || max_hold_reached ? LeaseLossReason::expired : LeaseLossReason::connection;
}
}  // namespace

LeaseKeeper::LeaseKeeper(std::shared_ptr<Endpoint> endpoint, ScriptCache& scripts, EventQueue* events,
                         std::shared_ptr<Observer> observer)
    : endpoint_(std::move(endpoint)),
      options_(endpoint_->options()),
      scripts_(scripts),
      events_(events),
      observer_(std::move(observer)) {}

LeaseKeeper::~LeaseKeeper() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void LeaseKeeper::keep(const std::shared_ptr<Lease>& lease) {
  const auto valid_until = lease->snapshot().valid_until;
  Entry entry{lease, Clock::time_point::max()};
  if (lease->renewal) {
    // Every lease / 3, and the first no later than halfway through the lease held now: a grant's
    // is shorter than the one renewals ask for (docs/design.md §10.6).
    const auto now = Clock::now();
    entry.next_renewal = std::min(now + lease->renewal->lease / 3, now + (valid_until - now) / 2);
  }
  const auto needed_at = std::min(entry.next_renewal, valid_until);
  std::lock_guard lock(mutex_);
  entries_.insert_or_assign(lease.get(), std::move(entry));
  if (!thread_.joinable()) thread_ = start_background_thread("lockbridge-keep", [this] { run(); });
  if (needed_at < sleeping_until_) changed_.notify_one();
}

void LeaseKeeper::forget(const Lease& lease) {
  std::lock_guard lock(mutex_);
  entries_.erase(&lease);  // if the thread is renewing it right now, collect() drops it later
}

LeaseKeeper::Clock::time_point LeaseKeeper::next_event() const {
  auto next = Clock::time_point::max();
  for (const auto& [key, entry] : entries_) {
    next = std::min({next, entry.next_renewal, entry.lease->snapshot().valid_until});
  }
  return next;
}

LeaseKeeper::Clock::time_point LeaseKeeper::collect(Clock::time_point now, std::vector<Entry>& due,
                                                    std::vector<Entry>& ended) {
  auto first_end = Clock::time_point::max();
  for (auto it = entries_.begin(); it != entries_.end();) {
    Entry& entry = it->second;
    const Lease::Snapshot lease = entry.lease->snapshot();
    if (!lease.held) {
      it = entries_.erase(it);
      continue;
    }
    if (now >= lease.valid_until) {
      ended.push_back(std::move(entry));
      it = entries_.erase(it);
      continue;
    }
    first_end = std::min(first_end, lease.valid_until);
    // Due, or due within a sixth of the lease (a quarter of what is left of a grant's shorter one):
    // renewing a little early costs nothing and lets locks taken at nearly the same time share a
    // round trip.
    const auto early = std::min<Clock::duration>(entry.lease->renewal ? entry.lease->renewal->lease / 6 : Clock::duration::zero(),
                                                 (lease.valid_until - now) / 4);
    if (entry.next_renewal != Clock::time_point::max() && entry.next_renewal <= now + early) {
      due.push_back(std::move(entry));
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
  return first_end;
}

void LeaseKeeper::requeue(Entry entry) {
  std::lock_guard lock(mutex_);
  entries_.insert_or_assign(entry.lease.get(), std::move(entry));
}

void LeaseKeeper::run() noexcept {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    std::vector<Entry> due;
    std::vector<Entry> ended;
    const auto now = Clock::now();
    // The first end of a lease kept or about to be renewed: no renewal waits for Redis past it.
    const auto must_end_by = collect(now, due, ended);
    if (due.empty() && ended.empty()) {
      sleeping_until_ = next_event();
      if (sleeping_until_ == Clock::time_point::max()) {
        changed_.wait(lock);
      } else {
        changed_.wait_until(lock, sleeping_until_);
      }
      sleeping_until_ = Clock::time_point::min();  // awake: keep() need not wake us
      continue;
    }
    lock.unlock();
    for (const Entry& entry : ended) {
      entry.lease->lost(ran_out(*entry.lease, entry.max_hold_reached),
                        ran_out_reason(*entry.lease, entry.max_hold_reached));
    }
    for (std::size_t first = 0; first < due.size(); first += kBatch) {
      std::vector<Entry> batch(
          std::make_move_iterator(due.begin() + static_cast<std::ptrdiff_t>(first)),
          std::make_move_iterator(due.begin() + static_cast<std::ptrdiff_t>(std::min(due.size(), first + kBatch))));
      renew(batch, must_end_by);
    }
    lock.lock();
  }
}

void LeaseKeeper::renew(std::vector<Entry>& batch, Clock::time_point must_end_by) {
  const auto now = Clock::now();
  std::vector<Lease::IoClaim> io;  // held until the replies are read
  std::vector<Entry> sent;
  std::vector<ScriptCall> calls;
  std::vector<milliseconds> asked;
  std::vector<std::string> values;  // the value each renewal expects to find
  for (Entry& entry : batch) {
    Lease& lease = *entry.lease;
    Lease::IoClaim claim = lease.try_claim_io();
    if (!claim) {  // the holder is extending or releasing: come back shortly
      entry.next_renewal = now + retry_delay(lease);
      requeue(std::move(entry));
      continue;
    }
    const Lease::Snapshot snapshot = lease.snapshot();
    if (!snapshot.held) continue;  // released meanwhile: drop it
    const auto until_max_hold = std::chrono::floor<milliseconds>(lease.renewal->hold_deadline - now);
    const milliseconds lease_asked = std::min(lease.renewal->lease, until_max_hold);
    entry.max_hold_reached = lease_asked < lease.renewal->lease;
    if (lease_asked < milliseconds(1)) {  // max_hold reached: no more renewals; it runs out
      entry.next_renewal = Clock::time_point::max();
      requeue(std::move(entry));
      continue;
    }
    if (lease.renewal->once && snapshot.valid_until >= now + lease_asked) {
      // A grant's top-up that the holder's own extend() made needless: never shorten it.
      entry.next_renewal = Clock::time_point::max();
      requeue(std::move(entry));
      continue;
    }
    calls.push_back(lease.strategy->extend_call(lease.key, snapshot.value, lease_asked));
    asked.push_back(lease_asked);
    values.push_back(snapshot.value);
    io.push_back(std::move(claim));
    sent.push_back(std::move(entry));
  }
  if (calls.empty()) return;

  std::vector<ReplyPtr> replies;
  try {
    if (router_) {
      replies = renew_routed(calls, must_end_by);
    } else {
      if (connection_ && (connection_->broken() || endpoint_->outdated(*connection_))) {  // e.g. a former master
        if (connection_->broken()) endpoint_->connection_broke(*connection_);
        connection_.reset();
      }
      if (!connection_) connection_ = endpoint_->connect();
      const WaitCap cap(*connection_, must_end_by);
      replies = run_scripts(*connection_, scripts_, calls);
      renewal_round_trips_.fetch_add(1, std::memory_order_relaxed);
    }
  } catch (const std::exception&) {
    // The server is unreachable or the reply was lost: try again soon; the lease runs out (and
    // the holder is told) if no renewal gets through in time.
    if (connection_ && connection_->broken()) {
      endpoint_->connection_broke(*connection_);
      connection_.reset();
    }
    io.clear();
    for (Entry& entry : sent) {
      entry.next_renewal = Clock::now() + retry_delay(*entry.lease);
      requeue(std::move(entry));
    }
    return;
  }

  struct Loss {
    std::shared_ptr<Lease> lease;
    Error why;
    LeaseLossReason reason;
  };
  std::vector<Loss> lost;
  std::size_t renewed = 0;
  for (std::size_t i = 0; i < sent.size(); ++i) {
    Entry& entry = sent[i];
    Lease& lease = *entry.lease;
    if (!replies[i]) {  // Redis Cluster: its master did not answer; renew it again soon
      entry.next_renewal = Clock::now() + retry_delay(lease);
      requeue(std::move(entry));
      continue;
    }
    try {
      std::optional<std::string> value = lease.strategy->extend_outcome(*replies[i], lease.key, values[i]);
      if (value) {
        lease.renewed(std::move(*value), now + asked[i]);
        renewals_.fetch_add(1, std::memory_order_relaxed);
        ++renewed;
        entry.next_renewal = lease.renewal->once ? Clock::time_point::max() : next_renewal(lease, now, asked[i]);
        requeue(std::move(entry));
      } else {
        const LeaseLossReason reason = lease.observed ? why_not_ours(lease.key) : LeaseLossReason::taken;
        lost.push_back(Loss{std::move(entry.lease),
                            Error(Errc::lease_lost, describe("renew", lease.key) +
                                                        ": the key no longer holds our value (deleted, removed when "
                                                        "its TTL ran out, or taken over)"),
                            reason});
      }
    } catch (const Error& error) {
      if (error.errc() == Errc::wrong_type) {
        lost.push_back(Loss{std::move(entry.lease), error, LeaseLossReason::taken});  // replaced by another type
      } else {  // e.g. BUSY or OOM: the server may accept the next try
        entry.next_renewal = Clock::now() + retry_delay(lease);
        requeue(std::move(entry));
      }
    }
  }
  io.clear();  // the holders' callbacks may lead to a holder's thread calling unlock()
  for (const Loss& loss : lost) loss.lease->lost(loss.why, loss.reason);
  if (observer_ && renewed > 0) {
    try {
      events_->post([observer = observer_, renewed] { observer->renewed(RenewedEvent{renewed}); });
    } catch (...) {  // out of memory: the event is lost, the renewals are not
    }
  }
}

LeaseLossReason LeaseKeeper::why_not_ours(const std::string& key) noexcept {
  try {
    ReplyPtr reply;
    const auto exists = [&](Connection& connection) { reply = connection.run({"EXISTS", key}); };
    if (router_) {
      router_->route(key_slot(key), exists);
    } else if (connection_ && !connection_->broken()) {
      exists(*connection_);
    }
    if (reply && reply->type == REDIS_REPLY_INTEGER && reply->integer == 0) return LeaseLossReason::deleted;
  } catch (...) {  // unreachable now: "taken" is the safer guess (someone else may hold it)
  }
  return LeaseLossReason::taken;
}

std::vector<ReplyPtr> LeaseKeeper::renew_routed(std::span<const ScriptCall> calls,
                                                Clock::time_point must_end_by) noexcept {
  std::vector<ReplyPtr> replies(calls.size());  // null: not renewed this time, retried soon
  // One pipeline per master, with the renewals of the locks whose slots the map says it serves.
  std::map<NodeAddress, std::vector<std::size_t>> by_master;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    try {
      by_master[router_->master_of(key_slot(calls[i].keys.front()))].push_back(i);
    } catch (...) {  // no master serves its slot right now
    }
  }
  for (const auto& entry : by_master) {
    const auto& indexes = entry.second;  // a lambda below uses it (no structured binding)
    std::vector<ScriptCall> group;
    group.reserve(indexes.size());
    for (const std::size_t i : indexes) group.push_back(calls[i]);
    try {
      router_->route(key_slot(group.front().keys.front()), [&](Connection& connection) {
        const WaitCap cap(connection, must_end_by);
        std::vector<ReplyPtr> got = run_scripts(connection, scripts_, group);
        // A redirected renewal did not run. When none ran, the router sends the group where the
        // first redirect points; otherwise the redirected ones wait for the retry, which the
        // corrected map sends to their new master.
        if (all_redirected(got)) throw_if_rerouted(*got.front());
        for (std::size_t k = 0; k < got.size(); ++k) {
          if (!is_redirect(*got[k])) replies[indexes[k]] = std::move(got[k]);
        }
      });
      renewal_round_trips_.fetch_add(1, std::memory_order_relaxed);
    } catch (...) {  // this master is unreachable: only its leases wait for the retry
      for (const std::size_t i : indexes) replies[i].reset();
    }
  }
  return replies;
}

}  // namespace lockbridge::detail
