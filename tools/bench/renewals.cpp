#include "renewals.hpp"

#include <thread>
#include <vector>

#include "../cli_common.hpp"
#include "shared_run.hpp"

namespace lockbridge::tools::bench {

RenewalResult run_renewal_bench(const RedisServer& server, const MutexOptions& options, int locks,
                                std::chrono::milliseconds duration) {
  const Client client = server.client();
  const std::string prefix = "lockbridge:bench:renewals:" + std::to_string(now_ns()) + ":";
  std::vector<Mutex> held;
  held.reserve(static_cast<std::size_t>(locks));
  for (int i = 0; i < locks && !interrupted(); ++i) {  // a million acquisitions take a while
    held.emplace_back(client, prefix + std::to_string(i), options);
    if (!held.back().try_lock())
      throw Error(Errc::bad_option, "renewal bench: " + held.back().key() + " is held by someone else");
  }
  const ClientStats before = client.stats();
  const std::int64_t start = now_ns();
  sleep_unless_interrupted(duration);
  const ClientStats after = client.stats();
  RenewalResult result;
  result.locks = static_cast<int>(held.size());
  result.lease = options.lease;
  result.seconds = static_cast<double>(now_ns() - start) / 1e9;
  result.renewals = after.renewals - before.renewals;
  result.renewal_round_trips = after.renewal_round_trips - before.renewal_round_trips;
  for (const Mutex& mutex : held) result.still_held += mutex.owns_lock() ? 1 : 0;
  return result;  // the Mutexes release their keys here
}

nlohmann::ordered_json to_json(const RenewalResult& result) {
  const double per_trip = result.renewal_round_trips == 0
                              ? 0.0
                              : static_cast<double>(result.renewals) / static_cast<double>(result.renewal_round_trips);
  return {{"workload", "renewals"},
          {"locks", result.locks},
          {"lease_ms", result.lease.count()},
          {"seconds", result.seconds},
          {"renewals", result.renewals},
          {"renewal_round_trips", result.renewal_round_trips},
          {"renewals_per_round_trip", per_trip},
          {"still_held", result.still_held}};
}

}  // namespace lockbridge::tools::bench
