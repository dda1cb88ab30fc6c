// lockbridge::prometheus: Prometheus metrics of a service's locks (docs/observing.md), built on
// prometheus-cpp. One PrometheusMetrics per process: set its observer() on the Clients (or
// locks) to measure, watch() the Clients whose Redis round trips count, and serve() the metrics
// over HTTP, or register registry() with an Exposer of your own.
//
//   auto metrics = std::make_shared<lockbridge::PrometheusMetrics>();
//   lockbridge::ClientOptions options;
//   options.observer = metrics->observer();
//   lockbridge::Client client(url, options);
//   metrics->watch(client);
//   metrics->serve("127.0.0.1:9464");  // GET http://127.0.0.1:9464/metrics
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "lockbridge/client.hpp"
#include "lockbridge/export.hpp"
#include "lockbridge/observer.hpp"

namespace prometheus {
class Registry;
}

namespace lockbridge {

struct LOCKBRIDGE_API PrometheusOptions {
  // The value of a `key` label on the per-lock metrics, from the lock's key: it must take few
  // values (a prefix, a job name). Unset: no key label, since a label per key is one time series
  // per key, without bound.
  std::function<std::string(std::string_view key)> key_label;
};

class LOCKBRIDGE_API PrometheusMetrics {
 public:
  explicit PrometheusMetrics(PrometheusOptions options = {});
  ~PrometheusMetrics();
  PrometheusMetrics(const PrometheusMetrics&) = delete;
  PrometheusMetrics& operator=(const PrometheusMetrics&) = delete;

  // The observer that keeps the lock metrics; for ClientOptions::observer or MutexOptions::observer.
  std::shared_ptr<Observer> observer() const;
  // lockbridge_redis_round_trips_total, lockbridge_renewal_round_trips_total and
  // lockbridge_observer_events_dropped_total include `client`'s (and its copies') from now on.
  void watch(const Client& client);
  // Every metric above.
  std::shared_ptr<prometheus::Registry> registry() const;
  // Serves the metrics at http://ADDRESS/metrics until this object goes, on three HTTP worker
  // threads; a client that sends no request within 2 s is dropped, so an idle or slow client
  // cannot hold up a scrape. ADDRESS is HOST:PORT: HOST an IPv4 address (0.0.0.0: every
  // interface), [an IPv6 address] or localhost; PORT 0 to 65535, 0 picking a free one. Returns the
  // port. Throws Error{bad_option} for any other address, Error{io} naming the reason when nothing
  // can listen there (a port in use). Once per object.
  int serve(const std::string& address);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace lockbridge
