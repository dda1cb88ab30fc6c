#include "worker.hpp"

#include <algorithm>
#include <thread>
#include <utility>

#include "bench_lock.hpp"
#include "cli_common.hpp"
#include "replies.hpp"
#include "saturating.hpp"

namespace lockbridge::tools::bench {
namespace {

using std::chrono::milliseconds;

// The resource a fenced lock protects, as docs/design.md shows it: it remembers the largest fence
// it has seen and refuses a write carrying a smaller one (a holder whose lease ended meanwhile).
constexpr std::string_view kFencedWrite = R"lua(
local seen = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) < seen then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
return 1
)lua";

HoldSample::Release release_result(const std::error_code& error) {
  if (!error) return HoldSample::Release::released;
  return error == Errc::lease_lost ? HoldSample::Release::lease_lost : HoldSample::Release::failed;
}

class Worker {
 public:
  Worker(const WorkerSpec& spec, SharedRun& run, std::stop_token stop)
      : spec_(spec),
        run_(run),
        stop_(std::move(stop)),
        control_(run.control()),
        slot_(run.slot(spec.index)),
        lock_client_(spec.server.client(one_connection())),
        check_client_(spec.check_server.client(one_connection())),
        lock_(make_bench_lock(spec.front, lock_client_, spec.key, spec.lock, spec.read_share)) {}

  // Opens both connections and loads the lock's scripts, so the run measures steady state.
  void warm_up() {
    check_client_.ping();
    lock_client_.ping();
    if (lock_->try_lock()) lock_->unlock();
  }

  void loop() {
    for (int i = 0; i < spec_.rtt_pings / 4; ++i) lock_client_.ping();  // untimed: let the machine settle
    const std::uint64_t trips_before = lock_client_.stats().round_trips;
    std::uint64_t cycles = 0;
    std::uint32_t interleaved = 0;
    while (!control_.stop.load(std::memory_order_relaxed) && control_.take_ticket()) {
      if (!cycle()) {
        control_.return_ticket();
      } else if (spec_.rtt_pings > 0 && ++cycles % 4 == 0) {
        interleaved += time_pings(1);
      }
    }
    slot_.failing.store(failing_, std::memory_order_relaxed);
    slot_.round_trips.store(lock_client_.stats().round_trips - trips_before - interleaved, std::memory_order_relaxed);
    const auto timed = static_cast<int>(slot_.pings.load(std::memory_order_relaxed));
    if (timed < spec_.rtt_pings) time_pings(spec_.rtt_pings - timed);
  }

 private:
  static ClientOptions one_connection() {
    ClientOptions options;
    options.pool_size = 1;
    return options;
  }

  // Times up to `count` PINGs on the lock's connection; returns how many were sent.
  std::uint32_t time_pings(int count) {
    std::uint32_t sent = 0;
    try {
      for (int i = 0; i < count; ++i) {
        const std::uint32_t n = slot_.pings.load(std::memory_order_relaxed);
        if (n >= kMaxPings) break;
        const std::int64_t start = now_ns();
        ++sent;
        lock_client_.ping();
        slot_.rtt_us[n] = static_cast<float>(now_ns() - start) / 1000.0F;
        slot_.pings.store(n + 1, std::memory_order_release);
      }
    } catch (const std::exception& error) {  // e.g. during --fault restart: the others still count
      fail(std::string("PING: ") + error.what());
    }
    return sent;
  }

  // One acquisition, hold and release; false when nothing was acquired.
  bool cycle() {
    HoldSample sample;
    sample.client = spec_.index;
    sample.acquire_start_ns = now_ns();
    const std::int64_t end = control_.end_ns.load(std::memory_order_relaxed);
    if (sample.acquire_start_ns >= end) return false;  // the run is over (its stop flag may come later): no wait
    const std::int64_t deadline = std::min(
        end, add_saturating(sample.acquire_start_ns, std::chrono::nanoseconds(spec_.lock.acquire_timeout).count()));
    bool acquired = false;
    try {
      // A retry policy gives up once its next attempt would fall past the deadline; when that
      // deadline is the run's end, the client is still waiting, so its wait goes on: one wait,
      // not several shorter ones that would flatter the worst wait and the count.
      do {
        acquired = lock_->try_lock_for(std::chrono::nanoseconds(std::max<std::int64_t>(0, deadline - now_ns())), stop_);
      } while (!acquired && deadline == end && now_ns() < end && !control_.stop.load(std::memory_order_relaxed));
    } catch (const Error& error) {
      // Bad input (exit 2 for `hold`) fails every later attempt too: stop the run, not retry for ever.
      if (exit_code_for(error) == kExitUsage) {
        int none = 0;
        control_.bad_input.compare_exchange_strong(none, static_cast<int>(error.errc()));
        control_.stop.store(true);
      }
      fail(error.what());
      return false;
    } catch (const std::exception& error) {
      fail(error.what());
      return false;
    }
    // The server answered: this client works again (acquired or not: a wait the run's end cut short
    // is not a failure).
    failing_ = false;
    sample.acquire_end_ns = now_ns();
    if (!acquired) {
      // Giving up because the run ended (or was about to: a jedis-lock style policy counts its
      // attempts in the time left and may stop before the end) is not a timeout. Either way the
      // wait happened, and counts in the acquire percentiles.
      if (deadline < end && sample.acquire_end_ns < end) {
        slot_.timeouts.fetch_add(1, std::memory_order_relaxed);
      } else {
        slot_.unfinished.fetch_add(1, std::memory_order_relaxed);
      }
      run_.record_unacquired(spec_.index, sample.acquire_end_ns - sample.acquire_start_ns);
      return false;
    }
    control_.acquisitions.fetch_add(1, std::memory_order_relaxed);
    if (std::exchange(recovering_, false)) slot_.recoveries.fetch_add(1, std::memory_order_relaxed);
    const bool entered = check_command(true);
    if (entered) control_.holder.store(spec_.index, std::memory_order_release);
    pause(spec_.hold);
    // The hold's work ends with a write to the fenced resource: a holder paused past its lease
    // (--fault pause) writes late, with the fence of a lock that is someone else's by now.
    if (const auto fence = lock_->fence()) {
      sample.fenced_write_ns = now_ns();
      sample.fenced_write = fenced_write(*fence);
    }
    if (entered) {
      int me = spec_.index;
      control_.holder.compare_exchange_strong(me, -1, std::memory_order_acq_rel);
      check_command(false);
    }
    sample.release_start_ns = now_ns();
    lock_->unlock();
    sample.release_end_ns = now_ns();
    sample.release = release_result(lock_->last_error());
    run_.record(spec_.index, sample);
    pause(spec_.think);
    return true;
  }

  HoldSample::FencedWrite fenced_write(std::uint64_t fence) {
    try {
      const Reply reply =
          check_client_.command({"EVAL", kFencedWrite, "1", fenced_resource(spec_.check_key), std::to_string(fence)});
      return integer_reply(reply, {"EVAL"}) == 1 ? HoldSample::FencedWrite::accepted
                                                 : HoldSample::FencedWrite::rejected;
    } catch (const std::exception& error) {
      fail(std::string("fenced write: ") + error.what());
      return HoldSample::FencedWrite::none;
    }
  }

  // The check key's count on entering (`entering`) or leaving the critical section. A holder
  // alone INCRs it and must find 1. A read/write lock's readers may be in together: each reader
  // counts 1, a writer kWriterWeight, so a writer must find exactly kWriterWeight (nobody beside
  // it) and a reader less than it (no writer beside it). Any other count is a violation: another
  // client was inside at the same time. false when the command failed.
  bool check_command(bool entering) {
    static constexpr std::int64_t kWriterWeight = 1'000'000;
    const bool weighted = lock_->shared_layout() && !lock_->reading();
    const std::string weight = std::to_string(kWriterWeight);
    const char* command = weighted ? (entering ? "INCRBY" : "DECRBY") : (entering ? "INCR" : "DECR");
    enter_check();
    struct Leave {
      RunControl& control;
      ~Leave() { control.checks_in_flight.fetch_sub(1, std::memory_order_acq_rel); }
    } leave{control_};
    try {
      // A reply that is not a number is an error, not a count that proves an overlap.
      const Reply reply = weighted ? check_client_.command({command, spec_.check_key, weight})
                                   : check_client_.command({command, spec_.check_key});
      const std::int64_t count = integer_reply(reply, {command, spec_.check_key});
      const bool overlap = !entering                 ? false
                           : lock_->reading()        ? count >= kWriterWeight
                           : lock_->shared_layout() ? count != kWriterWeight
                                                     : count != 1;
      if (overlap) {
        slot_.violations.fetch_add(1, std::memory_order_relaxed);
        control_.violations.fetch_add(1, std::memory_order_relaxed);
      }
      return true;
    } catch (const std::exception& error) {
      fail(std::string(command) + " " + spec_.check_key + ": " + error.what());
      return false;
    }
  }

  // Waits while the conductor holds check-key commands back, then counts this one as in flight.
  void enter_check() {
    for (;;) {
      while (control_.check_paused.load(std::memory_order_acquire)) std::this_thread::sleep_for(milliseconds(1));
      control_.checks_in_flight.fetch_add(1, std::memory_order_acq_rel);
      if (!control_.check_paused.load(std::memory_order_acquire)) break;
      control_.checks_in_flight.fetch_sub(1, std::memory_order_acq_rel);
    }
    // The pooled check connection died with the old server; its first command would fail with an
    // outcome we could not know. A PING finds that out instead (the failure drops the connection).
    const int restarts = control_.restarts.load(std::memory_order_acquire);
    if (restarts != restarts_seen_) {
      restarts_seen_ = restarts;
      try {
        check_client_.ping();
      } catch (const Error&) {
      }
    }
  }

  // --hold, --think and the pause after a failure may be long: the end of the run, or a signal
  // (to this client's own process, or to the conductor, which then stops the run), cuts them short.
  void pause(milliseconds duration) {
    if (duration <= milliseconds::zero()) return;
    sleep_unless(duration, [this] { return control_.stop.load(std::memory_order_relaxed) || interrupted(); });
  }

  void fail(const std::string& message) {
    run_.note_error(spec_.index, message);
    control_.errors.fetch_add(1, std::memory_order_relaxed);
    failing_ = true;
    recovering_ = true;
    // A server that is down must not be hammered: wait a while (the longest retry sleep, at least
    // 10 ms) before the next cycle.
    pause(std::max({spec_.lock.retry.interval, spec_.lock.retry.cap, milliseconds(10)}));
  }

  const WorkerSpec& spec_;
  SharedRun& run_;
  std::stop_token stop_;
  RunControl& control_;
  ClientSlot& slot_;
  Client lock_client_;
  Client check_client_;
  std::unique_ptr<BenchLock> lock_;
  bool failing_ = false;     // its last command failed (and nothing has answered since)
  bool recovering_ = false;  // an error since its last acquisition: the next one is a recovery
  int restarts_seen_ = 0;
};

void wait_for_go(const RunControl& control) {
  while (!control.go.load(std::memory_order_acquire) && !control.stop.load(std::memory_order_acquire)) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

}  // namespace

void run_worker(const WorkerSpec& spec, SharedRun& run, std::stop_token stop) noexcept {
  RunControl& control = run.control();
  bool ready = false;
  try {
    Worker worker(spec, run, std::move(stop));
    try {
      worker.warm_up();
    } catch (const std::exception& error) {  // counted; the loop will retry (e.g. during a restart)
      run.note_error(spec.index, std::string("warm-up: ") + error.what());
      control.errors.fetch_add(1, std::memory_order_relaxed);
    }
    control.ready.fetch_add(1, std::memory_order_acq_rel);
    ready = true;
    wait_for_go(control);
    worker.loop();
  } catch (const std::exception& error) {  // e.g. bad options: the client never started
    run.note_error(spec.index, error.what());
    control.errors.fetch_add(1, std::memory_order_relaxed);
    run.slot(spec.index).failing.store(true, std::memory_order_relaxed);
    if (!ready) control.ready.fetch_add(1, std::memory_order_acq_rel);
  }
  control.finished.fetch_add(1, std::memory_order_acq_rel);
}

}  // namespace lockbridge::tools::bench
