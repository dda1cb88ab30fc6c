// --metrics HOST:PORT (hold, bench): serve Prometheus metrics of the run's locks while it runs
// (lockbridge::prometheus; docs/observing.md). The served address is printed on stderr.
#pragma once

#include <boost/program_options.hpp>
#include <memory>

#include "lockbridge/client.hpp"

namespace lockbridge::tools {

namespace po = boost::program_options;

// Metrics being served: the observer to give the run's Clients, and the Clients to count.
class ServedMetrics {
 public:
  virtual ~ServedMetrics() = default;
  virtual std::shared_ptr<Observer> observer() const = 0;
  virtual void watch(const Client& client) = 0;
};

void add_metrics_option(po::options_description& options);

// Null without --metrics. Starts serving and prints "metrics: http://HOST:PORT/metrics" on stderr.
// Throws Error{bad_option} for a malformed address or a lockbridge built without prometheus-cpp,
// Error{io} when nothing can listen there.
std::shared_ptr<ServedMetrics> serve_metrics(const po::variables_map& vm);

}  // namespace lockbridge::tools
