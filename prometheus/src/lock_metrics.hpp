// The Observer behind PrometheusMetrics: the per-lock metrics (docs/observing.md), kept in a
// prometheus::Registry. Safe to share between Clients: each has its own observer thread.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "lockbridge/observer.hpp"
#include "lockbridge/prometheus.hpp"

namespace lockbridge::detail {

class LockMetrics final : public Observer {
 public:
  LockMetrics(prometheus::Registry& registry, PrometheusOptions options);

  void acquired(const AcquiredEvent& event) override;
  void not_acquired(const NotAcquiredEvent& event) override;
  void released(const ReleasedEvent& event) override;
  void lease_lost(const LeaseLostEvent& event) override;
  void renewed(const RenewedEvent& event) override;

 private:
  // strategy (and key, with PrometheusOptions::key_label), plus `more`.
  prometheus::Labels labels(const LockEvent& event, prometheus::Labels more = {}) const;
  // The hold ended (released, or lost first): one lock fewer held, once.
  void hold_ended(HoldId hold);

  const PrometheusOptions options_;
  prometheus::Family<prometheus::Counter>& acquisitions_;
  prometheus::Family<prometheus::Histogram>& acquire_wait_;
  prometheus::Family<prometheus::Histogram>& hold_;
  prometheus::Family<prometheus::Counter>& releases_;
  prometheus::Family<prometheus::Counter>& leases_lost_;
  prometheus::Counter& renewals_;
  prometheus::Family<prometheus::Gauge>& locks_held_;

  std::mutex mutex_;                                           // open_holds_, when several Clients report
  std::unordered_map<HoldId, prometheus::Gauge*> open_holds_;  // acquired, not ended yet
};

}  // namespace lockbridge::detail
