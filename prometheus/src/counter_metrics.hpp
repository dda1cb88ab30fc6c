// The metrics of the objects that are not locks (Latch, Semaphore, LeasedSemaphore): their waits
// by outcome and the permits that move (docs/observing.md). Fed by LockMetrics, the one observer
// PrometheusMetrics hands out, from its counter_waited and permits_released events.
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "lockbridge/observer.hpp"
#include "lockbridge/prometheus.hpp"

namespace lockbridge::detail {

class CounterMetrics {
 public:
  // `options.key_label` labels these series as it labels the locks'.
  CounterMetrics(prometheus::Registry& registry, const PrometheusOptions& options);

  void waited(const CounterWaitEvent& event);
  void released(const PermitsReleasedEvent& event);

 private:
  // How a wait ended, and how a release did: the `outcome` label's values.
  enum class Wait : std::size_t { done, timeout, cancelled, error, count };
  enum class Release : std::size_t { released, lost, error, count };

  // The time series of one object kind (and key label), each made on first use.
  struct Series {
    prometheus::Labels labels;  // object, and key with PrometheusOptions::key_label
    std::array<prometheus::Counter*, static_cast<std::size_t>(Wait::count)> waits{};
    std::array<prometheus::Histogram*, static_cast<std::size_t>(Wait::count)> wait_seconds{};
    prometheus::Counter* permits_acquired = nullptr;
    std::array<prometheus::Counter*, static_cast<std::size_t>(Release::count)> permits_released{};
  };
  Series& series_of(const CounterEvent& event);  // called with mutex_ held

  const PrometheusOptions& options_;  // the LockMetrics' that holds this
  prometheus::Family<prometheus::Counter>& waits_;
  prometheus::Family<prometheus::Histogram>& wait_seconds_;
  prometheus::Family<prometheus::Counter>& permits_acquired_;
  prometheus::Family<prometheus::Counter>& permits_released_;

  std::mutex mutex_;                                   // series_, when several Clients report
  std::map<std::string, Series, std::less<>> series_;  // by object and key label
};

}  // namespace lockbridge::detail
