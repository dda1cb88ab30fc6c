#include "bench_config.hpp"

#include "../cli_common.hpp"
#include "shared_run.hpp"

#include <array>
#include <utility>

namespace lockbridge::tools::bench {

void BenchConfig::validate() const {
  lock.validate();
  if (rtt_pings < 1000 || rtt_pings > static_cast<int>(kMaxPings)) {
    throw Error(Errc::bad_option, "rtt needs between 1000 and " + std::to_string(kMaxPings) + " PINGs");
  }
  if (fault != Fault::none && clients < 2) {
    throw Error(Errc::bad_option, "--fault needs at least 2 clients: one to suffer it, one to show its effect");
  }
  if (catches_a_holder(fault) && !procs) {
    throw Error(Errc::bad_option, "--fault pause, kill and stall catch a client process holding: they need --procs");
  }
  if (catches_a_holder(fault) && hold <= std::chrono::milliseconds::zero()) {
    throw Error(Errc::bad_option,
                "--fault pause, kill and stall need --hold > 0, so that a holder can be caught holding");
  }
  if (!key.empty() && key == check_key) throw Error(Errc::bad_option, "--check-key must differ from --lock-key");
  if (read_share) {
    if (lock.strategy != StrategyKind::redisson || lock.wait_mode == WaitMode::fair || lock.token.fencing) {
      throw Error(Errc::bad_option,
                  "--read-share runs Redisson's read/write lock: it needs --strategy redisson, without fair mode "
                  "or fencing");
    }
    if (front == Front::async) throw Error(Errc::bad_option, "--read-share runs on the blocking front only");
  }
  // pause and stall cut a holder off for twice the lease, kill waits for its lease to end: the
  // run is kept going until then, so a lease too long for --duration would make it run that long.
  const auto effect = fault == Fault::pause || fault == Fault::stall ? 2 * lock.lease
                      : fault == Fault::kill                         ? lock.lease
                                                                     : std::chrono::milliseconds::zero();
  if (!ops && effect > duration) {
    throw Error(Errc::bad_option,
                "--fault " + std::string(to_string(fault)) + " lasts " +
                    (fault == Fault::kill ? "the lease" : "twice the lease") + " (" + std::to_string(effect.count()) +
                    " ms), longer than --duration (" + std::to_string(duration.count()) +
                    " ms): give a shorter --lease (with --fault the default is 2000 ms) or a longer --duration");
  }
}

std::string BenchConfig::wait_mode() const { return waiting_label(lock) + (lock.local_queue ? ", local queue" : ""); }

}  // namespace lockbridge::tools::bench
