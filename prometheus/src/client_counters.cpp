#include "client_counters.hpp"

#include <string>

namespace lockbridge::detail {
namespace {

prometheus::MetricFamily counter(std::string name, std::string help, std::uint64_t value) {
  prometheus::ClientMetric metric;
  metric.counter.value = static_cast<double>(value);
  return prometheus::MetricFamily{std::move(name), std::move(help), prometheus::MetricType::Counter, {metric}};
}

}  // namespace

void ClientCounters::watch(const Client& client) {
  std::lock_guard lock(mutex_);
  clients_.push_back(client);
}

std::vector<prometheus::MetricFamily> ClientCounters::Collect() const {
  ClientStats sum;
  {
    std::lock_guard lock(mutex_);
    for (const Client& client : clients_) {
      const ClientStats stats = client.stats();
      sum.round_trips += stats.round_trips;
      sum.renewal_round_trips += stats.renewal_round_trips;
      sum.observer_events_dropped += stats.observer_events_dropped;
    }
  }
  return {counter("lockbridge_redis_round_trips_total",
                  "Requests written to Redis by the watched Clients, each one round trip", sum.round_trips),
          counter("lockbridge_renewal_round_trips_total", "The watchdog's requests (counted in round trips too)",
                  sum.renewal_round_trips),
          counter("lockbridge_observer_events_dropped_total",
                  "Observer events dropped because a slow observer had too many pending", sum.observer_events_dropped)};
}

}  // namespace lockbridge::detail
