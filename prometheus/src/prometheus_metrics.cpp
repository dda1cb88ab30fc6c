#include "lockbridge/prometheus.hpp"

#include <prometheus/exposer.h>
#include <prometheus/registry.h>

#include <exception>

#include "client_counters.hpp"
#include "lock_metrics.hpp"
#include "lockbridge/error.hpp"

namespace lockbridge {

struct PrometheusMetrics::State {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  std::shared_ptr<detail::LockMetrics> locks;
  std::shared_ptr<detail::ClientCounters> clients = std::make_shared<detail::ClientCounters>();
  std::unique_ptr<prometheus::Exposer> exposer;
};

PrometheusMetrics::PrometheusMetrics(PrometheusOptions options) : state_(std::make_unique<State>()) {
  state_->locks = std::make_shared<detail::LockMetrics>(*state_->registry, std::move(options));
}

PrometheusMetrics::~PrometheusMetrics() = default;

std::shared_ptr<Observer> PrometheusMetrics::observer() const { return state_->locks; }

void PrometheusMetrics::watch(const Client& client) { state_->clients->watch(client); }

std::shared_ptr<prometheus::Registry> PrometheusMetrics::registry() const { return state_->registry; }

int PrometheusMetrics::serve(const std::string& address) {
  if (state_->exposer) throw Error(Errc::bad_option, "metrics: already served");
  const auto colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size() ||
      address.find_first_not_of("0123456789", colon + 1) != std::string::npos) {
    throw Error(Errc::bad_option, "metrics: '" + address + "' is not HOST:PORT");
  }
  try {
    // One thread: a scrape is small, and a service should not pay more for being watched.
    state_->exposer = std::make_unique<prometheus::Exposer>(address, 1);
  } catch (const std::exception& error) {
    throw Error(Errc::io, "metrics: cannot listen on " + address + ": " + error.what());
  }
  state_->exposer->RegisterCollectable(state_->registry);
  state_->exposer->RegisterCollectable(state_->clients);
  const std::vector<int> ports = state_->exposer->GetListeningPorts();
  return ports.empty() ? 0 : ports.front();
}

}  // namespace lockbridge
