#include "lockbridge/prometheus.hpp"

#include <prometheus/exposer.h>
#include <prometheus/registry.h>

#include <exception>

#include "client_counters.hpp"
#include "listen_address.hpp"
#include "lock_metrics.hpp"
#include "lockbridge/error.hpp"

namespace lockbridge {
namespace {
constexpr int kWorkers = 3;
constexpr std::chrono::milliseconds kRequestTimeout{2000};
}  // namespace

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
  const detail::ListenAddress listen = detail::parse_listen_address(address);
  try {
    // CivetWeb gives each connection a worker thread until it is answered. A client that connects
    // and sends nothing (or trickles) holds its worker until the request timeout, counted from
    // the connection's start; with three workers and 2 s, such a client delays a scrape by 2 s
    // at most, where CivetWeb's defaults (one worker here, 30 s) held every scrape behind it.
    state_->exposer = std::make_unique<prometheus::Exposer>(
        std::vector<std::string>{"listening_ports", listen.civet, "num_threads", std::to_string(kWorkers),
                                 "request_timeout_ms", std::to_string(kRequestTimeout.count())});
  } catch (const std::exception&) {
    throw Error(Errc::io, "metrics: cannot listen on " + listen.civet + ": " + detail::why_not_listening(listen));
  }
  state_->exposer->RegisterCollectable(state_->registry);
  state_->exposer->RegisterCollectable(state_->clients);
  const std::vector<int> ports = state_->exposer->GetListeningPorts();
  return ports.empty() ? 0 : ports.front();
}

}  // namespace lockbridge
