// The Observer behind PrometheusMetrics: the per-lock metrics (docs/observing.md), kept in a
// prometheus::Registry. Safe to share between Clients: each has its own observer thread.
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "counter_metrics.hpp"
#include "lockbridge/observer.hpp"
#include "lockbridge/prometheus.hpp"

namespace lockbridge::detail {

class LockMetrics final : public Observer {
 public:
  LockMetrics(prometheus::Registry& registry, PrometheusOptions options);

  void acquired(const AcquiredEvent& event) override;
  void not_acquired(const NotAcquiredEvent& event) override;
  void starving(const StarvingEvent& event) override;
  void released(const ReleasedEvent& event) override;
  void lease_lost(const LeaseLostEvent& event) override;
  void renewed(const RenewedEvent& event) override;
  void counter_waited(const CounterWaitEvent& event) override { counters_.waited(event); }
  void permits_released(const PermitsReleasedEvent& event) override { counters_.released(event); }

 private:
  // How an acquiring call ended, and how a release did: the `outcome` label's values.
  enum class Acquire : std::size_t { acquired, timeout, error, count };
  enum class Release : std::size_t { released, handed_over, lost, error, count };
  static constexpr std::size_t kLossReasons = static_cast<std::size_t>(LeaseLossReason::replication) + 1;

  // The time series of one strategy (and key label), each made on first use (metric_parts.hpp).
  struct Series {
    prometheus::Labels labels;  // strategy, and key with PrometheusOptions::key_label
    std::array<prometheus::Counter*, static_cast<std::size_t>(Acquire::count)> acquisitions{};
    std::array<prometheus::Histogram*, static_cast<std::size_t>(Acquire::count)> acquire_wait{};
    std::array<prometheus::Counter*, static_cast<std::size_t>(Release::count)> releases{};
    std::array<prometheus::Counter*, kLossReasons> leases_lost{};
    prometheus::Counter* starving_waits = nullptr;
    prometheus::Histogram* hold = nullptr;
    prometheus::Gauge* locks_held = nullptr;
  };

  // The series of `event`'s strategy and key label. Called with mutex_ held.
  Series& series_of(const LockEvent& event);
  void count_acquire(Series& series, Acquire outcome, std::chrono::nanoseconds wait);
  // The hold ended (released, or lost first): one lock fewer held, once. Called with mutex_ held.
  void hold_ended(HoldId hold);

  const PrometheusOptions options_;
  prometheus::Family<prometheus::Counter>& acquisitions_;
  prometheus::Family<prometheus::Counter>& starving_waits_;
  prometheus::Family<prometheus::Histogram>& acquire_wait_;
  prometheus::Family<prometheus::Histogram>& hold_;
  prometheus::Family<prometheus::Counter>& releases_;
  prometheus::Family<prometheus::Counter>& leases_lost_;
  prometheus::Counter& renewals_;
  prometheus::Family<prometheus::Gauge>& locks_held_;

  std::mutex mutex_;                                   // series_ and open_holds_, when several Clients report
  std::map<std::string, Series, std::less<>> series_;  // by strategy and key label
  struct OpenHold {
    prometheus::Gauge* gauge;
    std::string key;
  };
  std::unordered_map<HoldId, OpenHold> open_holds_;       // acquired, not ended yet
  std::unordered_map<std::string, HoldId> newest_holds_;  // the open hold of each key (the newest)
  CounterMetrics counters_;                               // last: it reads options_
};

}  // namespace lockbridge::detail
