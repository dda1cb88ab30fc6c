// lockbridge::prometheus against a real redis-server: locks are taken, refused, released and lost
// with a PrometheusMetrics observer attached, the exposition is fetched over HTTP from serve(),
// and its counters and histogram counts must match what was done.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "integration/redis_test_support.hpp"
#include "lockbridge/latch.hpp"
#include "lockbridge/prometheus.hpp"
#include "lockbridge/semaphore.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::milliseconds;

// GET http://127.0.0.1:<port>/metrics; the body's samples by "name{labels}" (comments skipped).
std::map<std::string, double> scrape(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    throw std::runtime_error("connect to the metrics port");
  }
  const std::string request = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  (void)send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string response;
  char buffer[4096];
  for (ssize_t n; (n = recv(fd, buffer, sizeof buffer, 0)) > 0;) response.append(buffer, static_cast<std::size_t>(n));
  close(fd);
  const auto body = response.find("\r\n\r\n");
  if (response.rfind("HTTP/1.1 200", 0) != 0 || body == std::string::npos) {
    throw std::runtime_error("metrics answered: " + response.substr(0, 200));
  }
  std::map<std::string, double> samples;
  std::istringstream lines(response.substr(body + 4));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.rfind(' ');
    samples[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return samples;
}

// The port a CLI run with --metrics 127.0.0.1:0 serves on, as it says on stderr; 0 when it never did.
int served_port(const BackgroundCli& cli) {
  int port = 0;
  (void)eventually([&] {
    const std::string errors = cli.errors();
    const auto at = errors.find("metrics: http://127.0.0.1:");
    if (at == std::string::npos) return false;
    port = std::stoi(errors.substr(at + 26));
    return true;
  });
  return port;
}

// For failure messages: lockbridge's own samples, histogram buckets left out.
std::string ours(const std::map<std::string, double>& samples) {
  std::string text;
  for (const auto& [name, value] : samples) {
    if (name.starts_with("lockbridge_") && name.find("_bucket{") == std::string::npos) {
      text += name + " " + std::to_string(value) + "\n";
    }
  }
  return text;
}

double sample(const std::map<std::string, double>& samples, const std::string& name) {
  const auto found = samples.find(name);
  return found == samples.end() ? -1 : found->second;
}

TEST(PrometheusMetrics, CountWhatTheLocksDid) {
  PrometheusMetrics metrics;
  ClientOptions options;
  options.observer = metrics.observer();
  const Client client = test_client(options);
  metrics.watch(client);
  const int port = metrics.serve("127.0.0.1:0");
  ASSERT_GT(port, 0);

  const std::string key = unique_key();
  Mutex mutex(client, key, one_attempt_options());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(mutex.try_lock());
    mutex.unlock();
  }
  ASSERT_TRUE(mutex.try_lock());
  Mutex refused(client, key, one_attempt_options());
  EXPECT_FALSE(refused.try_lock());
  const std::string held = R"({strategy="token"})";
  EXPECT_TRUE(eventually([&] { return sample(scrape(port), "lockbridge_locks_held" + held) == 1; }));
  mutex.unlock();

  MutexOptions watched = one_attempt_options();
  watched.lease = milliseconds(300);
  watched.watchdog.enabled = true;
  const std::string lost_key = unique_key("lost");
  Mutex lost(client, lost_key, watched);
  ASSERT_TRUE(lost.try_lock());
  raw({"DEL", lost_key});  // the watchdog finds it gone: lost, deleted

  std::map<std::string, double> samples;
  ASSERT_TRUE(eventually([&] {
    samples = scrape(port);
    return sample(samples, R"(lockbridge_leases_lost_total{reason="deleted",strategy="token"})") == 1 &&
           sample(samples, "lockbridge_locks_held" + held) == 0;
  })) << ours(samples);
  EXPECT_EQ(sample(samples, R"(lockbridge_acquisitions_total{outcome="acquired",strategy="token"})"), 5);
  EXPECT_EQ(sample(samples, R"(lockbridge_acquisitions_total{outcome="timeout",strategy="token"})"), 1);
  EXPECT_EQ(sample(samples, R"(lockbridge_acquire_wait_seconds_count{outcome="acquired",strategy="token"})"), 5);
  EXPECT_EQ(sample(samples, R"(lockbridge_acquire_wait_seconds_count{outcome="timeout",strategy="token"})"), 1);
  EXPECT_EQ(sample(samples, R"(lockbridge_releases_total{outcome="released",strategy="token"})"), 4);
  EXPECT_EQ(sample(samples, R"(lockbridge_hold_seconds_count{strategy="token"})"), 4);
  EXPECT_GE(sample(samples, "lockbridge_renewals_total"), 0);
  EXPECT_GT(sample(samples, "lockbridge_redis_round_trips_total"), 10);
  EXPECT_EQ(sample(samples, "lockbridge_observer_events_dropped_total"), 0);
}

// The objects that are not locks: their waits by outcome, and the permits taken and given back.
TEST(PrometheusMetrics, CountTheWaitsOfLatchesAndSemaphoresAndThePermitsThatMove) {
  PrometheusMetrics metrics;
  ClientOptions options;
  options.observer = metrics.observer();
  const Client client = test_client(options);
  const int port = metrics.serve("127.0.0.1:0");
  ASSERT_GT(port, 0);

  Semaphore semaphore(client, unique_key("pool"));
  ASSERT_TRUE(semaphore.try_set_permits(2));
  ASSERT_TRUE(semaphore.try_acquire(2));
  EXPECT_FALSE(semaphore.try_acquire_for(milliseconds(1)));
  semaphore.release(2);
  Latch latch(client, unique_key("latch"));
  EXPECT_TRUE(latch.try_wait_for(milliseconds(0)));

  std::map<std::string, double> samples;
  ASSERT_TRUE(eventually([&] {
    samples = scrape(port);
    return sample(samples, R"(lockbridge_counter_waits_total{object="latch",outcome="done"})") == 1;
  })) << ours(samples);
  EXPECT_EQ(sample(samples, R"(lockbridge_counter_waits_total{object="semaphore",outcome="done"})"), 1);
  EXPECT_EQ(sample(samples, R"(lockbridge_counter_waits_total{object="semaphore",outcome="timeout"})"), 1);
  EXPECT_EQ(sample(samples, R"(lockbridge_counter_wait_seconds_count{object="semaphore",outcome="timeout"})"), 1);
  EXPECT_EQ(sample(samples, R"(lockbridge_permits_acquired_total{object="semaphore"})"), 2);
  EXPECT_EQ(sample(samples, R"(lockbridge_permits_released_total{object="semaphore",outcome="released"})"), 2);
  EXPECT_EQ(sample(samples, R"(lockbridge_acquisitions_total{outcome="acquired",strategy="token"})"), -1)
      << "a semaphore counted as a lock";
}

// Notify mode's starvation rule: a wait past the bound is counted, and so is the release that
// hands the lock to it.
TEST(PrometheusMetrics, CountStarvingWaitsAndHandoffs) {
  PrometheusMetrics metrics;
  ClientOptions options;
  options.observer = metrics.observer();
  const Client holder_client = test_client(options);
  const Client waiter_client = test_client(options);  // another Client: a waiter of another process
  const int port = metrics.serve("127.0.0.1:0");
  MutexOptions notify = one_attempt_options();
  notify.wait_mode = WaitMode::notify;
  notify.local_queue = false;
  notify.acquire_timeout = std::chrono::seconds(30);
  notify.retry = RetryPolicy::backoff_with_jitter(milliseconds(1), milliseconds(5));
  notify.starvation_after = milliseconds(1);
  const std::string key = unique_key();
  Mutex holder(holder_client, key, notify);
  ASSERT_TRUE(holder.try_lock());
  Mutex waiter(waiter_client, key, notify);
  auto waited = std::async(std::launch::async, [&] { waiter.lock(); });
  const std::string starving = R"(lockbridge_starving_waits_total{strategy="token"})";
  ASSERT_TRUE(eventually([&] { return sample(scrape(port), starving) == 1; }));
  holder.unlock();
  ASSERT_EQ(waited.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  waited.get();
  waiter.unlock();
  std::map<std::string, double> samples;
  EXPECT_TRUE(eventually([&] {
    samples = scrape(port);
    return sample(samples, R"(lockbridge_releases_total{outcome="handed_over",strategy="token"})") == 1 &&
           sample(samples, R"(lockbridge_releases_total{outcome="released",strategy="token"})") == 1;
  })) << ours(samples);
  EXPECT_EQ(sample(samples, starving), 1);
}

TEST(PrometheusMetrics, AKeyLabelOnlyWhenAskedForAndBoundedByTheCaller) {
  PrometheusOptions by_prefix;
  by_prefix.key_label = [](std::string_view key) { return std::string(key.substr(0, key.find(':'))); };
  PrometheusMetrics metrics(by_prefix);
  ClientOptions options;
  options.observer = metrics.observer();
  Mutex mutex(test_client(options), unique_key(), one_attempt_options());
  ASSERT_TRUE(mutex.try_lock());
  mutex.unlock();
  const int port = metrics.serve("127.0.0.1:0");
  EXPECT_TRUE(eventually([&] {
    return sample(scrape(port), R"(lockbridge_releases_total{key="lbtest",outcome="released",strategy="token"})") == 1;
  }));
}

// Each Client delivers its events on a thread of its own, so the release of one Client's lock can
// reach the metrics after another Client's acquisition of the same key. A key has one holder:
// lockbridge_locks_held counts it once (it read 2 and 3 for one key under bench's contention).
TEST(PrometheusMetrics, LocksHeldCountsOneHeldKeyOnceWhateverOrderItsEventsArriveIn) {
  PrometheusMetrics metrics;
  const int port = metrics.serve("127.0.0.1:0");
  const std::shared_ptr<Observer> observer = metrics.observer();
  const std::string held = R"(lockbridge_locks_held{strategy="token"})";
  const auto event = []<class Event>(Event held_event, HoldId hold, const std::string& key) {
    held_event.key = key;
    held_event.strategy = "token";
    held_event.hold = hold;
    return held_event;
  };
  const auto acquired = [&](HoldId hold, const std::string& key) {
    observer->acquired(event(AcquiredEvent{}, hold, key));
  };
  const auto released = [&](HoldId hold, const std::string& key) {
    observer->released(event(ReleasedEvent{}, hold, key));
  };
  acquired(10, "k");
  acquired(11, "k");  // 10's release is on its way
  EXPECT_EQ(sample(scrape(port), held), 1);
  released(10, "k");
  EXPECT_EQ(sample(scrape(port), held), 1);
  acquired(12, "other");
  EXPECT_EQ(sample(scrape(port), held), 2) << "two keys, two locks";
  acquired(9, "other");  // an older hold of it, come late: it ended before 12 began
  EXPECT_EQ(sample(scrape(port), held), 2);
  released(9, "other");
  released(11, "k");
  released(12, "other");
  EXPECT_EQ(sample(scrape(port), held), 0);

  // The same with real Clients: bench's threads, each with its own Client, on one key.
  BackgroundCli bench("bench --clients 4 --hold 1 --wait-mode poll --duration 3 --json --metrics 127.0.0.1:0");
  const int bench_port = served_port(bench);
  ASSERT_GT(bench_port, 0) << bench.errors();
  double most = 0;
  for (int i = 0; i < 60; ++i) {
    most = std::max(most, sample(scrape(bench_port), held));
    std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_LE(most, 1) << "one key, one holder";
  EXPECT_EQ(bench.finish().exit_code, 0);
}

TEST(PrometheusMetrics, AMalformedOrTakenAddressIsAClearError) {
  PrometheusMetrics metrics;
  // What CivetWeb would have read its own way: a list (and a port on every interface), a port that
  // wraps round, its '+' and 's' suffixes, a host name it cannot bind.
  for (const char* address : {"no-port", "7338,127.0.0.1:7339", "127.0.0.1:4294974634", "127.0.0.1:65536",
                              "127.0.0.1:+80", "127.0.0.1:80s", ":80", "redis.example:80", "::1:80", "[nope]:80"}) {
    const Error error = expect_error([&] { metrics.serve(address); });
    EXPECT_EQ(error.errc(), Errc::bad_option) << address;
    EXPECT_THAT(error.what(), ::testing::HasSubstr("metrics: '" + std::string(address) + "'")) << address;
  }
  const int port = metrics.serve("127.0.0.1:0");
  PrometheusMetrics other;
  const Error taken = expect_error([&] { other.serve("127.0.0.1:" + std::to_string(port)); });
  EXPECT_EQ(taken.errc(), Errc::io);
  EXPECT_THAT(taken.what(),
              ::testing::HasSubstr("cannot listen on 127.0.0.1:" + std::to_string(port) + ": Address already in use"));
  PrometheusMetrics named;
  EXPECT_GT(named.serve("localhost:0"), 0);
}

// A raw TCP connection to the metrics port, left open without a request (or with part of one).
class IdleConnection {
 public:
  IdleConnection(int port, const std::string& partial_request) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ < 0 || connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
      throw std::runtime_error("connect to the metrics port");
    }
    (void)send(fd_, partial_request.data(), partial_request.size(), MSG_NOSIGNAL);
  }
  ~IdleConnection() { close(fd_); }
  IdleConnection(const IdleConnection&) = delete;
  IdleConnection& operator=(const IdleConnection&) = delete;

 private:
  int fd_;
};

TEST(PrometheusMetrics, AnIdleOrSlowClientDoesNotHoldUpAScrape) {
  PrometheusMetrics metrics;
  const int port = metrics.serve("127.0.0.1:0");
  // More silent clients than the server has workers: one sends nothing, one half a request.
  const IdleConnection silent(port, "");
  const IdleConnection slow(port, "GET /metrics HTTP/1.1\r\n");
  const IdleConnection another(port, "");
  const IdleConnection yet_another(port, "G");
  // scrape() gives up after 5 s without an answer; the server's one worker once waited 30 s for each.
  for (int i = 0; i < 3; ++i) EXPECT_NO_THROW((void)scrape(port)) << "scrape " << i;
}

// `lockbridge hold --metrics`: while it holds the lock, its metrics say so.
TEST(PrometheusMetrics, HoldServesTheMetricsOfItsLockWhileItRuns) {
  const std::string key = unique_key();
  BackgroundCli hold("hold " + key + " --for 20000 --json --metrics 127.0.0.1:0");
  ASSERT_TRUE(hold.next_line().has_value()) << hold.errors();  // acquired
  const int port = served_port(hold);
  ASSERT_GT(port, 0) << hold.errors();
  EXPECT_TRUE(eventually([&] { return sample(scrape(port), R"(lockbridge_locks_held{strategy="token"})") == 1; }));
  EXPECT_EQ(sample(scrape(port), R"(lockbridge_acquisitions_total{outcome="acquired",strategy="token"})"), 1);
  EXPECT_GT(sample(scrape(port), "lockbridge_redis_round_trips_total"), 0);
  ::kill(hold.pid(), SIGTERM);
  (void)hold.finish();
}

TEST(PrometheusMetrics, TheCliRefusesAMalformedAddressBeforeAnythingElse) {
  const CliRun run = run_cli("hold " + unique_key() + " --for 0 --metrics 7338,127.0.0.1:7339");
  EXPECT_EQ(run.exit_code, 2) << run;
  EXPECT_THAT(run.errors, ::testing::HasSubstr("metrics: '7338,127.0.0.1:7339' is not HOST:PORT")) << run;
  EXPECT_THAT(run.output, ::testing::Not(::testing::HasSubstr("acquired"))) << run;
}

TEST(PrometheusMetrics, BenchRefusesMetricsForWorkersInOtherProcesses) {
  const CliRun run = run_cli("bench --procs --clients 2 --ops 10 --metrics 127.0.0.1:0");
  EXPECT_EQ(run.exit_code, 2) << run;
  EXPECT_THAT(run.errors, ::testing::HasSubstr("--metrics serves the locks of this process"));
}

}  // namespace
}  // namespace lockbridge::testing
