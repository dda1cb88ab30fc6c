// What the lock and counter metrics share: histogram buckets, durations in Prometheus's seconds,
// and their series, each made on first use (finding a series in its Family builds and hashes its
// label set, which costs more than the update itself, so it is done once, not per event).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "lockbridge/prometheus.hpp"

namespace lockbridge::detail {

using Buckets = prometheus::Histogram::BucketBoundaries;

// Waits: from a free lock's two round trips (tens of microseconds) to a timeout (seconds).
inline const Buckets kWaitBuckets{25e-6, 50e-6,  100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3,
                                  50e-3, 100e-3, 250e-3, 500e-3, 1,      2.5,  5,      10,   30};
// Holds: the same, and the minutes a job may hold a lock for.
inline const Buckets kHoldBuckets{25e-6,  50e-6,  100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3,
                                  100e-3, 250e-3, 500e-3, 1,      2.5,    5,    10,     30,   60,    300,   600};

inline double seconds(std::chrono::nanoseconds duration) { return std::chrono::duration<double>(duration).count(); }

// A family of `name` with its `help` text, registered in `registry`.
inline prometheus::Family<prometheus::Counter>& counters(prometheus::Registry& registry, const char* name,
                                                         const char* help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(registry);
}
inline prometheus::Family<prometheus::Histogram>& histograms(prometheus::Registry& registry, const char* name,
                                                             const char* help) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(registry);
}
inline prometheus::Family<prometheus::Gauge>& gauges(prometheus::Registry& registry, const char* name,
                                                     const char* help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(registry);
}

// The series in `slot`, found in `family` (with `labels` and `more`) the first time.
template <class Metric, class... Args>
Metric& made(Metric*& slot, prometheus::Family<Metric>& family, const prometheus::Labels& labels,
             prometheus::Labels more, Args&&... args) {
  if (slot == nullptr) {
    more.insert(labels.begin(), labels.end());
    slot = &family.Add(more, std::forward<Args>(args)...);
  }
  return *slot;
}

// The series of `value` of `label` (a strategy, an object kind) and, with options.key_label, of
// `key`'s label, in `all`, made with those labels the first time. `Series` has `labels`.
template <class Series>
Series& series_in(std::map<std::string, Series, std::less<>>& all, const char* label, std::string_view value,
                  const std::string& key, const PrometheusOptions& options) {
  std::string name(value);
  std::string key_label;
  if (options.key_label) {
    key_label = options.key_label(key);
    name += '\0' + key_label;
  }
  const auto found = all.find(name);
  if (found != all.end()) return found->second;
  Series& series = all[name];
  series.labels.emplace(label, std::string(value));
  if (options.key_label) series.labels.emplace("key", std::move(key_label));
  return series;
}

}  // namespace lockbridge::detail
