// lockbridge bench --renewals N: one Client holds N locks with the watchdog on for the run's
// duration; reports how many renewals its renewal thread made and in how many round trips (the
// watchdog batches renewals of many locks into one pipeline).
#pragma once

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "../cli_common.hpp"
#include "lockbridge/mutex.hpp"

namespace lockbridge::tools::bench {

struct RenewalResult {
  int locks = 0;  // taken: fewer than asked when a signal stopped the taking
  std::chrono::milliseconds lease{};
  double seconds = 0;
  std::uint64_t renewals = 0;
  std::uint64_t renewal_round_trips = 0;
  int still_held = 0;  // locks held at the end (all of them, unless a lease was lost)
};

// `options` must have the watchdog on. A signal (interrupted()) stops taking locks and ends the
// hold. Throws Error on Redis failures.
RenewalResult run_renewal_bench(const RedisServer& server, const MutexOptions& options, int locks,
                                std::chrono::milliseconds duration);

nlohmann::ordered_json to_json(const RenewalResult& result);

}  // namespace lockbridge::tools::bench
