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
}

std::string BenchConfig::wait_mode() const { return waiting_label(lock) + (lock.local_queue ? ", local queue" : ""); }

}  // namespace lockbridge::tools::bench
