#include "stats.hpp"

#include <algorithm>
#include <cmath>

namespace lockbridge::tools::bench {
namespace {
double micros(std::int64_t ns) { return static_cast<double>(ns) / 1000.0; }
}  // namespace

std::optional<double> percentile(std::vector<double>& values, double p) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
  return values[std::clamp<std::size_t>(rank, 1, values.size()) - 1];
}

std::vector<HoldSample> in_acquisition_order(const std::vector<std::span<const HoldSample>>& per_client) {
  std::vector<HoldSample> all;
  for (const auto& samples : per_client) all.insert(all.end(), samples.begin(), samples.end());
  std::sort(all.begin(), all.end(),
            [](const HoldSample& a, const HoldSample& b) { return a.acquire_end_ns < b.acquire_end_ns; });
  return all;
}

namespace {
std::optional<double> jain_index(const std::vector<std::span<const HoldSample>>& per_client) {
  double sum = 0;
  double sum_of_squares = 0;
  for (const auto& samples : per_client) {
    const auto n = static_cast<double>(samples.size());
    sum += n;
    sum_of_squares += n * n;
  }
  if (sum_of_squares == 0) return std::nullopt;
  return sum * sum / (static_cast<double>(per_client.size()) * sum_of_squares);
}
}  // namespace

SampleSummary summarize(const std::vector<std::span<const HoldSample>>& per_client,
                        const std::vector<std::span<const float>>& unacquired_us) {
  SampleSummary summary;
  std::vector<double> acquire, cycle, release, handoff;
  for (const auto& waits : unacquired_us) acquire.insert(acquire.end(), waits.begin(), waits.end());
  summary.unacquired_waits = acquire.size();
  bool first_client = true;
  for (const auto& samples : per_client) {
    const auto n = static_cast<std::uint64_t>(samples.size());
    summary.per_client_min = first_client ? n : std::min(summary.per_client_min, n);
    summary.per_client_max = std::max(summary.per_client_max, n);
    first_client = false;
    for (const HoldSample& s : samples) {
      acquire.push_back(micros(s.acquire_end_ns - s.acquire_start_ns));
      release.push_back(micros(s.release_end_ns - s.release_start_ns));
      cycle.push_back(micros((s.acquire_end_ns - s.acquire_start_ns) + (s.release_end_ns - s.release_start_ns)));
    }
  }
  summary.acquisitions = cycle.size();
  summary.fairness_jain = jain_index(per_client);
  summary.acquire_p50_us = percentile(acquire, 50);
  summary.acquire_p99_us = percentile(acquire, 99);
  summary.acquire_p999_us = percentile(acquire, 99.9);
  summary.acquire_max_us = acquire.empty() ? std::nullopt : std::optional<double>(acquire.back());
  summary.cycle_p50_us = percentile(cycle, 50);
  summary.release_p50_us = percentile(release, 50);

  const std::vector<HoldSample> ordered = in_acquisition_order(per_client);
  std::uint64_t same_owner = 0;
  for (std::size_t i = 1; i < ordered.size(); ++i) {
    const HoldSample& before = ordered[i - 1];
    const HoldSample& after = ordered[i];
    if (after.client == before.client) {
      ++same_owner;
    } else if (after.acquire_end_ns >= before.release_start_ns && after.acquire_start_ns <= before.release_start_ns) {
      // A handoff to a waiter: it was already asking when the release began. Overlapping holds are
      // violations, not handoffs; and a lock nobody was waiting for measures idle time, not the lock.
      handoff.push_back(micros(after.acquire_end_ns - before.release_start_ns));
    }
  }
  if (ordered.size() > 1) {
    summary.same_owner_ratio = static_cast<double>(same_owner) / static_cast<double>(ordered.size() - 1);
  }
  summary.handoff_p50_us = percentile(handoff, 50);
  summary.handoff_p99_us = percentile(handoff, 99);
  return summary;
}

}  // namespace lockbridge::tools::bench
