#include "faults.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <thread>

#include "saturating.hpp"

namespace lockbridge::tools::bench {
namespace {

double ms_between(std::int64_t from, std::int64_t to) { return static_cast<double>(to - from) / 1e6; }

// The lease and the run's duration are bounded (365 days, one day), far below the int64 limit in ns;
// the sums below saturate all the same.
std::int64_t ns(std::chrono::milliseconds duration) { return std::chrono::nanoseconds(duration).count(); }

}  // namespace

FaultInjector::FaultInjector(const BenchConfig& config, SharedRun& run, Fleet& fleet, const Client& admin,
                             EmbeddedRedis* embedded, const Links& links, std::int64_t start_ns)
    : config_(config),
      run_(run),
      fleet_(fleet),
      admin_(admin),
      embedded_(embedded),
      links_(links),
      // Early enough to leave room for the effect, late enough that every client is in its loop.
      inject_at_(add_saturating(start_ns, std::min<std::int64_t>(ns(config.duration) / 4, 1000 * kNsPerMs))) {
  if (config_.fault == Fault::none || config_.fault == Fault::skew) phase_ = Phase::done;  // skew is set up per client
}

bool FaultInjector::catch_holder() {
  RunControl& control = run_.control();
  const int holder = control.holder.load(std::memory_order_acquire);
  if (holder < 0) return false;
  // A killed client never finishes its PINGs: the round trip every figure is read against would
  // be missing (or rest on a handful of samples). Wait for another client to hold.
  if (config_.fault == Fault::kill && holder == kRttClient) return false;
  fleet_.suspend(holder);
  // Stopped between its INCR and its DECR, or caught just after: then let it go and try again.
  if (control.holder.load(std::memory_order_acquire) != holder) {
    fleet_.resume(holder);
    return false;
  }
  victim_ = holder;
  return true;
}

void FaultInjector::pause_check_key() {
  RunControl& control = run_.control();
  control.check_paused.store(true, std::memory_order_release);
  const std::int64_t give_up = now_ns() + 2000 * kNsPerMs;  // a check command is one round trip
  while (control.checks_in_flight.load(std::memory_order_acquire) > 0 && now_ns() < give_up) {
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

void FaultInjector::tick(std::int64_t now) {
  if (phase_ == Phase::done || now < inject_at_) return;
  RunControl& control = run_.control();
  const std::int64_t lease = ns(config_.lock.lease);
  switch (config_.fault) {
    case Fault::pause:
    case Fault::stall:
      // A holder cut off for twice its lease: stopped (pause), or running on behind a partition
      // between it and Redis (stall: its requests, renewals, release, the check key, the fenced
      // write, accepted by the network and delivered only when the link heals).
      if (phase_ == Phase::waiting) {
        if (!catch_holder()) return;
        if (config_.fault == Fault::stall) {
          links_.at(static_cast<std::size_t>(victim_))->stall();
          fleet_.resume(victim_);
        }
        fault_ns_ = now_ns();
        phase_ = Phase::active;
        keep_until_ = add_saturating(add_saturating(fault_ns_, 2 * lease), 1000 * kNsPerMs);
        announce(config_.fault == Fault::stall ? "its link to the server stalled" : "stopped (SIGSTOP)",
                 2 * config_.lock.lease);
      } else if (now >= add_saturating(fault_ns_, 2 * lease)) {
        clear();
      }
      return;
    case Fault::kill:
      if (phase_ == Phase::waiting) {
        if (!catch_holder()) return;
        fleet_.kill_client(victim_);
        fault_ns_ = now_ns();
        announce("killed (SIGKILL)", std::nullopt);
        acquisitions_at_fault_ = control.acquisitions.load();
        // The dead holder never leaves the check key: do it for it, or every later INCR would
        // count as a violation. Nobody else can be inside yet: the lock is still held.
        int dead = victim_;
        control.holder.compare_exchange_strong(dead, -1);
        try {
          admin_.command({"DECR", config_.check_key});
        } catch (const Error& error) {
          failure_ = std::string("could not leave the check key for the killed client: ") + error.what();
        }
        phase_ = Phase::active;
        keep_until_ =
            add_saturating(add_saturating(fault_ns_, lease), 10'000 * kNsPerMs);  // give up waiting for a recovery
      } else if (control.acquisitions.load() > acquisitions_at_fault_) {
        keep_until_ = now + 500 * kNsPerMs;
        phase_ = Phase::done;
      }
      return;
    case Fault::restart:
      phase_ = Phase::done;
      if (embedded_ == nullptr) {
        failure_ = "restart needs the embedded server (run without --url): lockbridge cannot restart another Redis";
        return;
      }
      pause_check_key();
      fault_ns_ = now_ns();
      try {
        embedded_->restart();
      } catch (const std::exception& error) {
        failure_ = error.what();
      }
      cleared_ns_ = now_ns();
      control.restarts.fetch_add(1, std::memory_order_acq_rel);
      control.check_paused.store(false, std::memory_order_release);
      keep_until_ = cleared_ns_ + 2000 * kNsPerMs;
      return;
    case Fault::none:
    case Fault::skew:
      return;
  }
}

void FaultInjector::announce(std::string_view what, std::optional<std::chrono::milliseconds> lasting) const {
  if (!config_.progress) return;
  std::string line = "bench: --fault " + std::string(to_string(config_.fault)) + ": client " + std::to_string(victim_) +
                     ", holding the lock, " + std::string(what);
  if (lasting) line += " for " + std::to_string(lasting->count()) + " ms";
  std::fprintf(stderr, "%s\n", line.c_str());
}

void FaultInjector::clear() {
  if (phase_ != Phase::active || (config_.fault != Fault::pause && config_.fault != Fault::stall)) return;
  if (config_.fault == Fault::stall) {
    links_.at(static_cast<std::size_t>(victim_))->heal();
  } else {
    fleet_.resume(victim_);
  }
  cleared_ns_ = now_ns();
  phase_ = Phase::done;
}

nlohmann::ordered_json FaultInjector::report(const std::vector<HoldSample>& ordered) const {
  if (config_.fault == Fault::none) return nullptr;
  ordered_json out{{"fault", to_string(config_.fault)}, {"lease_ms", config_.lock.lease.count()}};
  if (!failure_.empty()) out["failure"] = failure_;
  if (config_.fault == Fault::skew) {
    report_skew(out);
  } else if (phase_ == Phase::waiting || fault_ns_ == 0) {
    if (failure_.empty()) out["failure"] = "not injected: the run ended before a holder could be caught";
  } else if (config_.fault == Fault::restart) {
    report_restart(out);
  } else {
    report_victim(ordered, out);
  }
  return out;
}

void FaultInjector::report_skew(ordered_json& out) const {
  const bool client_clock = config_.lock.faithful();  // the faithful preset reads each client's clock
  out["skewed_client"] = 0;
  out["skew_ms"] = config_.skew.count();
  out["clock"] = client_clock                                    ? "each client's own (the skew applies)"
                 : config_.lock.strategy == StrategyKind::legacy ? "Redis TIME (no client clock to skew)"
                                                                 : "none (Redis expires the key)";
  out["double_grants"] = run_.control().violations.load();
}

void FaultInjector::report_restart(ordered_json& out) const {
  const RunControl& control = run_.control();
  out["downtime_ms"] = ms_between(fault_ns_, cleared_ns_);
  out["data"] = embedded_ != nullptr && embedded_->persistence() == EmbeddedRedis::Persistence::append_only
                    ? "kept: crashed (SIGKILL), the append-only file (fsync always) replayed on start"
                    : "kept: SHUTDOWN SAVE, reloaded on start";
  out["errors"] = control.errors.load();
  std::uint64_t recoveries = 0;
  for (int i = 0; i < run_.clients(); ++i) recoveries += run_.slot(i).recoveries.load();
  out["recoveries"] = recoveries;
  out["violations"] = control.violations.load();
}

// pause, stall and kill: what the other clients did while the victim was stopped, cut off or dead.
void FaultInjector::report_victim(const std::vector<HoldSample>& ordered, ordered_json& out) const {
  out["victim"] = victim_;
  // The victim's hold that the fault hit: acquired before it, not yet released.
  const auto hit = std::find_if(ordered.begin(), ordered.end(), [&](const HoldSample& s) {
    return s.client == victim_ && s.acquire_end_ns <= fault_ns_ && s.release_start_ns >= fault_ns_;
  });
  const HoldSample* victim_hold = hit == ordered.end() ? nullptr : &*hit;
  const bool lingers = config_.fault == Fault::pause || config_.fault == Fault::stall;  // comes back, unlike kill
  const std::int64_t victim_gone = lingers && victim_hold ? victim_hold->release_end_ns : INT64_MAX;
  std::uint64_t entries = 0;
  std::int64_t first_other = 0;
  for (const HoldSample& s : ordered) {
    if (s.client == victim_ || s.acquire_end_ns < fault_ns_) continue;
    if (first_other == 0) first_other = s.acquire_end_ns;
    if (s.acquire_end_ns <= victim_gone) ++entries;
  }
  if (config_.fault == Fault::kill) {
    out["key_unusable_ms"] =
        first_other == 0 ? ordered_json(nullptr) : ordered_json(ms_between(fault_ns_, first_other));
    if (first_other == 0) out["failure"] = "no other client acquired the key before the run ended";
    out["violations"] = run_.control().violations.load();
    return;
  }
  out[config_.fault == Fault::stall ? "stalled_ms" : "paused_ms"] = ms_between(fault_ns_, cleared_ns_);
  out["second_holder_entries"] = entries;
  out["violations"] = run_.control().violations.load();
  out["victim_release"] = victim_release(victim_hold, entries);
  report_fencing(ordered, out);
}

std::string_view FaultInjector::victim_release(const HoldSample* victim_hold, std::uint64_t entries) {
  if (victim_hold == nullptr) return "not recorded";
  switch (victim_hold->release) {
    case HoldSample::Release::lease_lost:
      return "refused: the lease had ended, nothing was deleted";
    case HoldSample::Release::failed:
      return "failed";
    case HoldSample::Release::released:
      break;
  }
  return entries > 0 ? "deleted the key, which by then was another client's lock" : "released";
}

// A fenced write is stale when another client acquired the lock between the writer's acquisition
// and the sending of its write: the writer's lease had ended (the pause) and the lock was someone
// else's. A writer stopped after sending wrote on time, however late its answer came.
void FaultInjector::report_fencing(const std::vector<HoldSample>& ordered, ordered_json& out) const {
  if (!config_.lock.token.fencing) {
    out["stale_writes_accepted_by_fenced_resource"] = nullptr;
    out["fencing"] = "off (run with --strategy token --fencing)";
    return;
  }
  std::uint64_t stale = 0;
  std::uint64_t accepted = 0;
  for (std::size_t i = 0; i + 1 < ordered.size(); ++i) {
    const HoldSample& writer = ordered[i];
    if (writer.fenced_write == HoldSample::FencedWrite::none) continue;
    if (ordered[i + 1].acquire_end_ns >= writer.fenced_write_ns) continue;  // nobody else got in first
    ++stale;
    if (writer.fenced_write == HoldSample::FencedWrite::accepted) ++accepted;
  }
  out["stale_writes"] = stale;
  out["stale_writes_accepted_by_fenced_resource"] = accepted;
  out["fencing"] = stale == 0      ? "on; no holder wrote after its lease had passed to another"
                   : accepted == 0 ? "on; the resource refused every stale write"
                                   : "on; the resource accepted a stale write";
}

}  // namespace lockbridge::tools::bench
