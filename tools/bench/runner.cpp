#include "runner.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>
#include <thread>

#include "cli_common.hpp"
#include "fault_proxy.hpp"
#include "faults.hpp"
#include "fleet.hpp"
#include "lockbridge/lock_keys.hpp"
#include "lockbridge/url.hpp"
#include "replies.hpp"
#include "report.hpp"
#include "saturating.hpp"
#include "shared_run.hpp"

namespace lockbridge::tools::bench {
namespace {

// Samples kept per client; more acquisitions are still counted, just not timed.
constexpr std::size_t kSamplesPerClient = std::size_t{1} << 20;

std::string fresh_key() {
  std::random_device random;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%08x%08x", random(), random());
  return std::string("lockbridge:bench:") + hex;
}

// The check key counts the clients inside the critical section. A client of another program
// that joins the run may be inside when we start, so a count above zero must drop to zero within
// two seconds; one that stays up is a run that died inside, and counting from there would be wrong.
// Returns whether the key did not exist (then it is ours to remove afterwards).
bool claim_check_key(const Client& admin, const std::string& check_key) {
  const std::int64_t give_up = now_ns() + 2000 * kNsPerMs;
  for (;;) {
    const Reply reply = admin.command({"GET", check_key});
    if (reply.is_nil()) return true;
    const std::string current = string_reply(reply, {"GET", check_key});
    if (current == "0") return false;
    if (now_ns() >= give_up) {
      throw Error(Errc::bad_value, "check key '" + check_key + "' has held " + current +
                                       " for 2 s: an earlier run died inside the critical section, or a client "
                                       "ignores the protocol; delete it or choose another --check-key");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// --fault stall: one FaultProxy per client between it and the server, so that one client's link
// can be stalled while the others' stay healthy. Empty for other faults. A single server on this
// machine only (unix socket or loopback TCP, plain or TLS), without credentials in the URL.
Links client_links(const BenchConfig& config, const RedisServer& server) {
  Links links;
  if (config.fault != Fault::stall) return links;
  const RedisUrl url = parse_redis_url(server.url);
  const bool loopback = url.host == "127.0.0.1" || url.host == "localhost" || url.host == "::1";
  if (url.topology != RedisUrl::Topology::single || url.user || url.password ||
      (url.transport == RedisUrl::Transport::tcp && !loopback)) {
    throw Error(Errc::bad_option,
                "--fault stall puts a proxy of its own between each client and the server: it needs one server on "
                "this machine (a unix socket or a loopback address) and a URL without credentials");
  }
  for (int i = 0; i < config.clients; ++i) {
    // Their threads start once the client processes are forked (start_links).
    links.push_back(url.transport == RedisUrl::Transport::unix_socket
                        ? std::make_unique<FaultProxy>(url.socket_path, FaultProxy::Start::later)
                        : std::make_unique<FaultProxy>(url.port, FaultProxy::Start::later));
  }
  return links;
}

std::vector<WorkerSpec> worker_specs(const BenchConfig& config, const RedisServer& server, const Links& links) {
  // Through its link, a client reaches the same server with the same scheme and database.
  std::string link_prefix;
  std::string link_suffix;
  if (!links.empty()) {
    const RedisUrl url = parse_redis_url(server.url);
    link_prefix = std::string(url.tls ? "rediss" : "redis") + "://127.0.0.1:";
    link_suffix = "/" + std::to_string(url.db);
  }
  std::vector<WorkerSpec> specs;
  for (int i = 0; i < config.clients; ++i) {
    WorkerSpec spec{i,           server,       server,      config.key,
                    config.check_key, config.lock, config.front, config.hold,
                    config.think,     i == kRttClient ? config.rtt_pings : 0};
    spec.read_share = config.read_share;
    if (config.fault == Fault::skew && i == 0) spec.lock.legacy.clock_offset = config.skew;
    if (!links.empty()) spec.server.url = link_prefix + std::to_string(links[i]->port()) + link_suffix;
    specs.push_back(std::move(spec));
  }
  return specs;
}

// "token, 8 clients: 3 s of 10 s, 1234 acquisitions, 0 violations" on stderr, every second once
// the run has lasted 2 s; rewritten in place on a terminal, one line every 5 s otherwise.
class Progress {
 public:
  Progress(const BenchConfig& config, std::int64_t start) : config_(config), start_(start), tty_(isatty(2) != 0) {}

  void update(std::int64_t now, const RunControl& control) {
    const bool long_run = config_.ops || config_.duration > std::chrono::seconds(2);
    if (!config_.progress || !long_run || now - start_ < 2000 * kNsPerMs || now < next_) return;
    next_ = now + (tty_ ? 1000 : 5000) * kNsPerMs;
    const std::string limit = config_.ops ? std::to_string(*config_.ops) + " acquisitions"
                                          : std::to_string(config_.duration.count() / 1000) + " s";
    std::fprintf(stderr, "%sbench %s, %d client%s: %lld s of %s, %llu acquisitions, %llu violations%s",
                 tty_ ? "\r" : "", strategy_label(config_).c_str(), config_.clients, config_.clients == 1 ? "" : "s",
                 static_cast<long long>((now - start_) / (1000 * kNsPerMs)), limit.c_str(),
                 static_cast<unsigned long long>(control.acquisitions.load()),
                 static_cast<unsigned long long>(control.violations.load()), tty_ ? "   " : "\n");
    printed_ = true;
  }

  ~Progress() {
    if (printed_ && tty_) std::fputs("\n", stderr);
  }

 private:
  const BenchConfig& config_;
  std::int64_t start_;
  bool tty_;
  std::int64_t next_ = 0;
  bool printed_ = false;
};

std::optional<double> per_acquire(double count, std::uint64_t acquisitions) {
  if (acquisitions == 0) return std::nullopt;
  return count / static_cast<double>(acquisitions);
}

}  // namespace

BenchResult run_bench(BenchConfig config, const RedisServer& server, EmbeddedRedis* embedded) {
  const bool own_key = config.key.empty();
  if (own_key) config.key = fresh_key();
  if (config.check_key.empty()) config.check_key = config.key + ":check";
  config.validate();
  if (config.fault == Fault::restart && embedded == nullptr) {
    throw Error(Errc::bad_option,
                "--fault restart needs the embedded server (no --url and no LOCKBRIDGE_URL): "
                "lockbridge can only restart a redis-server it started");
  }

  const Links links = client_links(config, server);  // outlives the fleet: its clients talk through them
  BenchResult result;
  const Client admin = server.client();
  // A server that is not Redis answers the check key's GET with what it likes, which would read
  // as a check key in use (bad input, exit 2): it fails the PING first (protocol, exit 3).
  admin.ping();
  const bool own_check_key = claim_check_key(admin, config.check_key);

  SharedRun run(config.clients, kSamplesPerClient);
  RunControl& control = run.control();
  control.tickets.store(config.ops ? static_cast<std::int64_t>(*config.ops) : INT64_MAX);
  control.end_ns.store(INT64_MAX);
  const std::vector<WorkerSpec> specs = worker_specs(config, server, links);
  Fleet fleet(specs, run, config.procs);
  for (const auto& link : links) link->start();
  // A signal ends this wait too: a client process that died before it was ready never will be.
  while (control.ready.load() < config.clients && !interrupted())
    std::this_thread::sleep_for(std::chrono::milliseconds(1));

  const CommandCounts before = read_commandstats(admin);
  const std::optional<double> cpu_before = read_cpu_seconds(admin);
  const std::int64_t start = now_ns();
  const std::int64_t planned_end = add_saturating(start, std::chrono::nanoseconds(config.duration).count());
  if (!config.ops) control.end_ns.store(planned_end);
  control.go.store(true, std::memory_order_release);

  FaultInjector faults(config, run, fleet, admin, embedded, links, start);
  Progress progress(config, start);
  for (;;) {
    const std::int64_t now = now_ns();
    progress.update(now, control);
    faults.tick(now);
    const bool all_done = control.finished.load() + fleet.killed() >= config.clients;
    if (all_done || interrupted()) break;
    if (!config.ops) {
      const std::int64_t end = std::max(planned_end, faults.keep_running_until());
      control.end_ns.store(end);
      if (now >= end) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  // Ended (or interrupted) while a fault is on: a stalled link heals and a stopped client goes on,
  // so every client finishes its cycle (its release reaches Redis) and leaves.
  faults.clear();
  control.stop.store(true);
  fleet.join();
  result.duration_s = static_cast<double>(now_ns() - start) / 1e9;
  const ClientSlot& timer = run.slot(kRttClient);
  std::vector<double> rtt(timer.rtt_us, timer.rtt_us + std::min(timer.pings.load(), kMaxPings));
  if (rtt.empty()) throw Error(Errc::io, "bench: no PING round trip could be timed: " + std::string(timer.first_error));
  result.rtt_us = std::round(*percentile(rtt, 50) * 10) / 10;  // floats: keep the digits that mean something

  std::uint64_t round_trips = 0;
  std::vector<std::span<const HoldSample>> samples;
  std::vector<std::span<const float>> unacquired;
  for (int i = 0; i < config.clients; ++i) {
    const ClientSlot& slot = run.slot(i);
    samples.push_back(run.samples(i));
    unacquired.push_back(run.unacquired_waits_us(i));
    round_trips += slot.round_trips.load();
    result.timeouts += slot.timeouts.load();
    result.unfinished_waits += slot.unfinished.load();
    if (slot.first_error[0] != '\0')
      result.first_errors.push_back("client " + std::to_string(i) + ": " + slot.first_error);
    if (slot.failing.load() && !result.stopped_by) {
      result.stopped_by = "client " + std::to_string(i) +
                          " was still failing when the run ended (its first error: " + slot.first_error + ")";
    }
    for (const HoldSample& s : samples.back())
      result.lost_leases += s.release == HoldSample::Release::lease_lost ? 1 : 0;
  }
  result.acquisitions = control.acquisitions.load();
  result.violations = control.violations.load();
  result.errors = control.errors.load();
  result.summary = summarize(samples, unacquired);
  result.dropped_samples =
      result.acquisitions > result.summary.acquisitions ? result.acquisitions - result.summary.acquisitions : 0;
  result.fault = faults.report(in_acquisition_order(samples));

  try {
    result.commands = lock_commands_between(before, read_commandstats(admin));
    if (result.commands)
      result.redis_cmds_per_acquire = per_acquire(static_cast<double>(total(*result.commands)), result.acquisitions);
    // A restarted server (--fault restart) counts its CPU from zero again: no figure then.
    const std::optional<double> cpu_after = read_cpu_seconds(admin);
    if (cpu_before && cpu_after && *cpu_after >= *cpu_before && result.commands)
      result.redis_cpu_us_per_acquire = per_acquire((*cpu_after - *cpu_before) * 1e6, result.acquisitions);
    // Killed clients never reported their round trips.
    if (fleet.killed() == 0)
      result.round_trips_per_acquire = per_acquire(static_cast<double>(round_trips), result.acquisitions);
    // Ours to remove only while no client (of any language) is inside the critical section; the
    // fenced resource (--fencing) is the check key's.
    if (own_check_key) {
      // The fenced resource only with its check key: a client of another program still in the run
      // keeps both (its resource's largest fence must not go back). Two commands: on Redis Cluster
      // the two keys may be in different slots.
      const Reply removed = admin.command(
          {"EVAL", "if redis.call('GET', KEYS[1]) == '0' then return redis.call('DEL', KEYS[1]) end return 0", "1",
           config.check_key});
      if (removed.kind == Reply::Kind::integer && removed.integer == 1) {
        admin.command({"DEL", fenced_resource(config.check_key)});
      }
    }
    // A random key nobody else knows: ours to remove, with the keys the lock kept beside it (its
    // fence counter, waiter queues). A key the user named keeps them: its fence counter must never
    // go back.
    if (own_key) {
      const LockKeyNames names = lock_key_names(config.key);
      admin.command({"DEL", config.key, names.fence_counter, names.waiter_queue, names.waiter_times, names.fair_queue,
                     names.fair_deadlines, names.grant});
    }
  } catch (const Error& error) {
    result.first_errors.push_back(std::string("after the run: ") + error.what());
  }
  if (const int bad_input = control.bad_input.load(); bad_input != 0) {
    // The clients' first error says what was wrong; it already ends in the code's description.
    const auto errc = static_cast<Errc>(bad_input);
    std::string first = result.first_errors.empty() ? std::string("an acquire failed") : result.first_errors.front();
    const std::string suffix = ": " + make_error_code(errc).message();
    if (first.ends_with(suffix)) first.resize(first.size() - suffix.size());
    throw Error(errc, "bench stopped: the lock key cannot be used (" + first + ")");
  }
  result.config = std::move(config);
  return result;
}

}  // namespace lockbridge::tools::bench
