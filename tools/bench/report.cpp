#include "report.hpp"
#include "key_text.hpp"

#include <cstdio>

#include "cli_common.hpp"

namespace lockbridge::tools::bench {

using nlohmann::ordered_json;

ordered_json optional_number(const std::optional<double>& value) {
  return value ? ordered_json(*value) : ordered_json(nullptr);
}

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

std::string fixed(const std::optional<double>& value, int decimals) {
  return value ? fixed(*value, decimals) : std::string("-");
}

double acquisitions_per_s(const BenchResult& result) noexcept {
  return result.duration_s > 0 ? static_cast<double>(result.acquisitions) / result.duration_s : 0.0;
}

std::string strategy_label(const BenchConfig& config) {
  if (config.read_share) return "redisson read/write, " + std::to_string(*config.read_share) + "% reads";
  if (config.lock.strategy != StrategyKind::legacy) return std::string(to_string(config.lock.strategy));
  return "legacy " + std::string(to_string(config.lock.legacy.preset));
}

std::string micros_cell(const std::optional<double>& us) {
  if (!us) return "-";
  return *us >= 10000 ? fixed(*us / 1000, 1) + " ms" : fixed(*us, 1) + " us";
}

std::string latency_cell(const std::optional<double>& us, double rtt_us) {
  if (!us) return "-";
  return micros_cell(us) + " (" + fixed(*us / rtt_us, 1) + "x)";
}

ordered_json to_json(const BenchResult& r) {
  const BenchConfig& c = r.config;
  const SampleSummary& s = r.summary;
  const bool legacy = c.lock.strategy == StrategyKind::legacy;
  ordered_json commands = nullptr;
  if (r.commands && r.acquisitions > 0) {
    commands = ordered_json::object();
    for (const auto& [name, calls] : *r.commands)
      commands[name] = static_cast<double>(calls) / static_cast<double>(r.acquisitions);
  }
  return ordered_json{
      {"strategy", to_string(c.lock.strategy)},
      {"preset", legacy ? ordered_json(to_string(c.lock.legacy.preset)) : ordered_json(nullptr)},
      {"format", legacy ? ordered_json(to_string(c.lock.legacy.format)) : ordered_json(nullptr)},
      {"wait_mode", c.wait_mode()},
      {"front", c.front == Front::async ? "async" : "blocking"},
      {"read_share_pct", c.read_share ? ordered_json(*c.read_share) : ordered_json(nullptr)},
      {"clients", c.clients},
      {"procs", c.procs},
      {"hold_ms", c.hold.count()},
      {"think_ms", c.think.count()},
      {"lease_ms", c.lock.lease.count()},
      {"key", c.key},
      {"check_key", c.check_key},
      {"duration_s", r.duration_s},
      {"acquisitions", r.acquisitions},
      {"acquisitions_per_s", acquisitions_per_s(r)},
      {"violations", r.violations},
      {"errors", r.errors},
      {"timeouts", r.timeouts},
      {"lost_leases", r.lost_leases},
      {"rtt_us", r.rtt_us},
      {"cycle_p50_us", optional_number(s.cycle_p50_us)},
      {"acquire_p50_us", optional_number(s.acquire_p50_us)},
      {"acquire_p99_us", optional_number(s.acquire_p99_us)},
      {"acquire_p999_us", optional_number(s.acquire_p999_us)},
      {"acquire_max_us", optional_number(s.acquire_max_us)},
      {"unacquired_waits", s.unacquired_waits},
      {"unfinished_waits", r.unfinished_waits},
      {"release_p50_us", optional_number(s.release_p50_us)},
      {"handoff_p50_us", optional_number(s.handoff_p50_us)},
      {"handoff_p99_us", optional_number(s.handoff_p99_us)},
      {"same_owner_ratio", optional_number(s.same_owner_ratio)},
      {"per_client_min", s.per_client_min},
      {"per_client_max", s.per_client_max},
      {"fairness_jain", optional_number(s.fairness_jain)},
      {"redis_cmds_per_acquire", optional_number(r.redis_cmds_per_acquire)},
      {"redis_cpu_us_per_acquire", optional_number(r.redis_cpu_us_per_acquire)},
      {"round_trips_per_acquire", optional_number(r.round_trips_per_acquire)},
      {"redis_commands_per_acquire", commands},
      {"untimed_acquisitions", r.dropped_samples},
      {"fault", r.fault},
      {"first_errors", r.first_errors},
      {"stopped_by_errors", r.stopped_by ? nlohmann::ordered_json(*r.stopped_by) : nlohmann::ordered_json()},
  };
}

void print_table(std::ostream& out, const BenchResult& r) {
  const BenchConfig& c = r.config;
  const SampleSummary& s = r.summary;
  // Values may be bytes from the command line or from Redis (keys, error messages): terminal-safe.
  const auto row = [&out](const std::string& name, const std::string& value) {
    out << "  " << name << std::string(name.size() < 26 ? 26 - name.size() : 1, ' ') << terminal_text(value) << "\n";
  };
  out << "lockbridge bench: " << strategy_label(c) << ", " << c.wait_mode() << ", " << c.clients << " client"
      << (c.clients == 1 ? "" : "s") << (c.procs ? " (processes)" : "") << ", hold " << c.hold.count() << " ms, think "
      << c.think.count() << " ms, lease " << c.lock.lease.count() << " ms\n";
  row("round trip (PING p50)", fixed(r.rtt_us, 1) + " us");
  row("duration", fixed(r.duration_s, 2) + " s");
  row("acquisitions", std::to_string(r.acquisitions) + " (" + fixed(acquisitions_per_s(r), 0) + "/s)");
  row("violations", std::to_string(r.violations));
  row("errors / timeouts", std::to_string(r.errors) + " / " + std::to_string(r.timeouts));
  row("lost leases", std::to_string(r.lost_leases));
  row("cycle p50", latency_cell(s.cycle_p50_us, r.rtt_us));
  row("acquire p50 / p99", latency_cell(s.acquire_p50_us, r.rtt_us) + " / " + latency_cell(s.acquire_p99_us, r.rtt_us));
  row("acquire p99.9 / max",
      latency_cell(s.acquire_p999_us, r.rtt_us) + " / " + latency_cell(s.acquire_max_us, r.rtt_us));
  row("waits without the lock", std::to_string(s.unacquired_waits) + " (" + std::to_string(r.unfinished_waits) +
                                    " cut off by the run's end, the rest timed out; counted above)");
  row("handoff p50 / p99", latency_cell(s.handoff_p50_us, r.rtt_us) + " / " + latency_cell(s.handoff_p99_us, r.rtt_us));
  row("same owner next", fixed(s.same_owner_ratio, 3));
  row("per client min / max", std::to_string(s.per_client_min) + " / " + std::to_string(s.per_client_max));
  row("fairness (Jain)", fixed(s.fairness_jain, 3));
  row("redis cmds / acquire", fixed(r.redis_cmds_per_acquire, 2));
  row("redis cpu / acquire", micros_cell(r.redis_cpu_us_per_acquire));
  row("round trips / acquire", fixed(r.round_trips_per_acquire, 2));
  if (!r.fault.is_null()) {
    for (const auto& [name, value] : r.fault.items())
      row("fault: " + name, value.is_string() ? value.get<std::string>() : value.dump());
  }
  for (const auto& error : r.first_errors) row("first error", error);
  if (r.stopped_by) row("stopped by errors", *r.stopped_by);
}

}  // namespace lockbridge::tools::bench
