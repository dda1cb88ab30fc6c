// What a run's samples say: latency percentiles, handoffs, fairness. Pure functions of the samples.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "shared_run.hpp"

namespace lockbridge::tools::bench {

// Nearest-rank percentile (p in (0, 100]) of `values`, which it sorts; nullopt when empty.
std::optional<double> percentile(std::vector<double>& values, double p);

struct SampleSummary {
  std::uint64_t acquisitions = 0;
  // Every wait: the acquisitions' and those that ended without the lock (run end, timeout).
  std::optional<double> acquire_p50_us, acquire_p99_us, acquire_p999_us, acquire_max_us;
  std::uint64_t unacquired_waits = 0;  // of them, the waits that ended without the lock
  std::optional<double> cycle_p50_us;  // acquire call + release call, hold excluded
  std::optional<double> release_p50_us;
  // From the start of a release call to the return of the next acquire call of another client.
  std::optional<double> handoff_p50_us, handoff_p99_us;
  std::optional<double> same_owner_ratio;  // share of consecutive holds by the same client
  std::uint64_t per_client_min = 0, per_client_max = 0;
  // Jain's fairness index of the per-client acquisitions, (sum x)^2 / (n sum x^2): 1 when every
  // client got as many, 1/n when one got them all; none without acquisitions.
  std::optional<double> fairness_jain;
};

// `per_client[i]` holds client i's samples; clients with none count as zero acquisitions.
// `unacquired_us[i]` (optional) holds client i's waits that ended without the lock.
SampleSummary summarize(const std::vector<std::span<const HoldSample>>& per_client,
                        const std::vector<std::span<const float>>& unacquired_us = {});

// The samples of every client, ordered by the time each acquisition returned.
std::vector<HoldSample> in_acquisition_order(const std::vector<std::span<const HoldSample>>& per_client);

}  // namespace lockbridge::tools::bench
