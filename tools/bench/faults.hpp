// --fault pause|kill|skew|restart|stall: the conductor's side of each scenario. Each injects its fault
// once, a little after the run starts, keeps the run going until the effect has shown, and says
// what happened from the samples afterwards.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench_config.hpp"
#include "embedded_server.hpp"
#include "fault_proxy.hpp"
#include "fleet.hpp"
#include "lockbridge/client.hpp"
#include "shared_run.hpp"

namespace lockbridge::tools::bench {

// --fault stall: each client's own link to the server (runner.cpp), in client order.
using Links = std::vector<std::unique_ptr<FaultProxy>>;

class FaultInjector {
 public:
  // `embedded` is needed for restart (lockbridge can only restart a server it started), `links`
  // for stall.
  FaultInjector(const BenchConfig& config, SharedRun& run, Fleet& fleet, const Client& admin, EmbeddedRedis* embedded,
                const Links& links, std::int64_t start_ns);

  // Called by the conductor every few milliseconds.
  void tick(std::int64_t now);
  // Ends a fault still on when the run ends (its time, or an interrupt): heals a stalled link,
  // resumes a stopped client.
  void clear();
  // The run must not end before this (the fault's effect takes time to show).
  std::int64_t keep_running_until() const noexcept { return keep_until_; }

  // The scenario's findings, from every client's samples in acquisition order; null for none.
  nlohmann::ordered_json report(const std::vector<HoldSample>& ordered) const;

 private:
  using ordered_json = nlohmann::ordered_json;
  void report_skew(ordered_json& out) const;
  void report_restart(ordered_json& out) const;
  void report_victim(const std::vector<HoldSample>& ordered, ordered_json& out) const;  // pause, kill
  static std::string_view victim_release(const HoldSample* victim_hold, std::uint64_t entries);
  void report_fencing(const std::vector<HoldSample>& ordered, ordered_json& out) const;

  bool catch_holder();  // suspends the current holder; false when nobody is caught holding
  // One line on stderr (unless the run is quiet): which client the fault hit, how, for how long.
  void announce(std::string_view what, std::optional<std::chrono::milliseconds> lasting) const;
  void pause_check_key();  // holds INCR/DECR of the check key back until none is in flight

  const BenchConfig& config_;
  SharedRun& run_;
  Fleet& fleet_;
  const Client& admin_;
  EmbeddedRedis* embedded_;
  const Links& links_;
  std::int64_t inject_at_;
  std::int64_t keep_until_ = 0;
  enum class Phase { waiting, active, done } phase_ = Phase::waiting;
  int victim_ = -1;
  std::int64_t fault_ns_ = 0;    // pause: suspended; kill: killed; stall: link stalled; restart: shutdown sent
  std::int64_t cleared_ns_ = 0;  // pause: resumed; stall: link healed; restart: answering again
  std::uint64_t acquisitions_at_fault_ = 0;
  std::string failure_;  // why the fault could not be injected
};

}  // namespace lockbridge::tools::bench
