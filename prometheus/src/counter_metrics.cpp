#include "counter_metrics.hpp"

#include <utility>

#include "lockbridge/error.hpp"
#include "metric_parts.hpp"

namespace lockbridge::detail {

CounterMetrics::CounterMetrics(prometheus::Registry& registry, const PrometheusOptions& options)
    : options_(options),
      waits_(counters(registry, "lockbridge_counter_waits_total",
                      "Latch waits and semaphore acquiring calls, by object (latch, semaphore, leased_semaphore) and "
                      "outcome: done, timeout, cancelled or error")),
      wait_seconds_(histograms(registry, "lockbridge_counter_wait_seconds",
                               "How long a latch wait or a semaphore acquiring call took, by object and outcome")),
      permits_acquired_(
          counters(registry, "lockbridge_permits_acquired_total", "Semaphore permits taken by this process's calls")),
      permits_released_(counters(registry, "lockbridge_permits_released_total",
                                 "Semaphore permits this process gave back, by outcome: released, lost (a leased "
                                 "permit whose lease had ended, or unknown) or error (not confirmed)")) {}

namespace {

constexpr std::array<const char*, 4> kWaitOutcomes{"done", "timeout", "cancelled", "error"};
constexpr std::array<const char*, 3> kReleaseOutcomes{"released", "lost", "error"};

}  // namespace

CounterMetrics::Series& CounterMetrics::series_of(const CounterEvent& event) {
  return series_in(series_, "object", event.object, event.key, options_);
}

void CounterMetrics::waited(const CounterWaitEvent& event) {
  Wait outcome = event.done ? Wait::done : Wait::timeout;
  if (event.error == std::errc::operation_canceled) {
    outcome = Wait::cancelled;
  } else if (event.error) {
    outcome = Wait::error;
  }
  const auto at = static_cast<std::size_t>(outcome);
  std::lock_guard lock(mutex_);
  Series& series = series_of(event);
  made(series.waits[at], waits_, series.labels, {{"outcome", kWaitOutcomes[at]}}).Increment();
  made(series.wait_seconds[at], wait_seconds_, series.labels, {{"outcome", kWaitOutcomes[at]}}, kWaitBuckets)
      .Observe(seconds(event.wait));
  if (event.done && event.permits > 0) {
    made(series.permits_acquired, permits_acquired_, series.labels, {}).Increment(static_cast<double>(event.permits));
  }
}

void CounterMetrics::released(const PermitsReleasedEvent& event) {
  Release outcome = Release::released;
  if (event.error == make_error_code(Errc::lease_lost)) {
    outcome = Release::lost;
  } else if (event.error) {
    outcome = Release::error;
  }
  const auto at = static_cast<std::size_t>(outcome);
  std::lock_guard lock(mutex_);
  Series& series = series_of(event);
  made(series.permits_released[at], permits_released_, series.labels, {{"outcome", kReleaseOutcomes[at]}})
      .Increment(static_cast<double>(event.permits));
}

}  // namespace lockbridge::detail
