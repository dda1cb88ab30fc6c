#include "metrics_option.hpp"

#include <iostream>
#include <string>

#include "lockbridge/error.hpp"
#ifdef LOCKBRIDGE_WITH_PROMETHEUS
#include "lockbridge/prometheus.hpp"
#endif

namespace lockbridge::tools {

void add_metrics_option(po::options_description& options) {
  options.add_options()("metrics", po::value<std::string>()->value_name("HOST:PORT"),
                        "serve Prometheus metrics of this run's locks at http://HOST:PORT/metrics while it runs "
                        "(HOST an IPv4 address, [an IPv6 address] or localhost; port 0: a free one; the address "
                        "is printed on stderr)");
}

#ifdef LOCKBRIDGE_WITH_PROMETHEUS
namespace {
class Served final : public ServedMetrics {
 public:
  explicit Served(const std::string& address) {
    const int port = metrics_.serve(address);
    // The host as given (serve() took nothing else): an IPv4 address, [an IPv6 one] or localhost.
    std::cerr << "metrics: http://" << address.substr(0, address.rfind(':')) << ':' << port << "/metrics" << std::endl;
  }
  std::shared_ptr<Observer> observer() const override { return metrics_.observer(); }
  void watch(const Client& client) override { metrics_.watch(client); }

 private:
  PrometheusMetrics metrics_;
};
}  // namespace
#endif

std::shared_ptr<ServedMetrics> serve_metrics(const po::variables_map& vm) {
  if (!vm.count("metrics")) return nullptr;
#ifdef LOCKBRIDGE_WITH_PROMETHEUS
  return std::make_shared<Served>(vm["metrics"].as<std::string>());
#else
  throw Error(Errc::bad_option,
              "--metrics: this lockbridge was built without prometheus-cpp (install prometheus-cpp-dev and rebuild)");
#endif
}

}  // namespace lockbridge::tools
