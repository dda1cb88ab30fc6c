// The threads lockbridge starts for itself (lib/src/util/background_thread.hpp): the lease keeper, the
// release notifier and the observer's event queue are named, and block the signals sent to a
// process, so those run the application's handlers on the application's threads. Read from
// /proc/self/task: each thread's name (comm) and blocked-signal mask (SigBlk).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>

#include "lockbridge/observer.hpp"
#include "redis_test_support.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::milliseconds;

// The blocked-signal mask of the thread whose /proc directory is `task`.
std::uint64_t blocked_signals(const std::filesystem::path& task) {
  std::ifstream status(task / "status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("SigBlk:")) return std::stoull(line.substr(7), nullptr, 16);
  }
  ADD_FAILURE() << "no SigBlk in " << task / "status";
  return 0;
}

// Each thread of this process named lockbridge-*, with its blocked-signal mask.
std::map<std::string, std::uint64_t> library_threads() {
  std::map<std::string, std::uint64_t> found;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    if (name.starts_with("lockbridge-")) found[name] = blocked_signals(task.path());
  }
  return found;
}

bool blocks(std::uint64_t mask, int signal) { return (mask >> (signal - 1)) & 1U; }

TEST(BackgroundThreads, AreNamedAndLeaveTheProcessSignalsToTheApplication) {
  const std::uint64_t caller_mask = blocked_signals("/proc/thread-self");
  ClientOptions client_options;
  client_options.observer = std::make_shared<Observer>();  // events go through the observer's thread
  Client client = test_client(client_options);
  MutexOptions options = token_options();
  options.wait_mode = WaitMode::notify;
  options.watchdog.enabled = true;
  const std::string key = unique_key();
  Mutex holder(client, key, options);
  ASSERT_TRUE(holder.try_lock());  // the watchdog's lease keeper starts
  // Not behind the holder in this process's local line, where it would wait without asking Redis.
  MutexOptions waiter_options = options;
  waiter_options.local_queue = false;
  Mutex waiter(client, key, waiter_options);
  // The wait subscribes, and the release notifier starts. It waits until told to stop: a wait
  // bounded by a short deadline could end before it subscribed on a loaded machine.
  std::stop_source stop_waiting;
  std::thread waiting([&] { EXPECT_FALSE(waiter.try_lock_for(std::chrono::seconds(30), stop_waiting.get_token())); });
  const char* const names[] = {"lockbridge-keep", "lockbridge-wake", "lockbridge-obs"};
  // Each thread names itself once it runs: looked for until all are there (10 s at most).
  const auto all_named = [&](const std::map<std::string, std::uint64_t>& threads) {
    return std::all_of(std::begin(names), std::end(names), [&](const char* name) { return threads.contains(name); });
  };
  auto threads = library_threads();
  for (int i = 0; i < 1000 && !all_named(threads); ++i) {
    std::this_thread::sleep_for(milliseconds(10));
    threads = library_threads();
  }
  stop_waiting.request_stop();
  waiting.join();
  for (const char* name : names) {
    ASSERT_TRUE(threads.contains(name)) << name << " is not among this process's threads";
    const std::uint64_t mask = threads.at(name);
    for (const int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE, SIGCHLD}) {
      EXPECT_TRUE(blocks(mask, signal)) << name << " does not block signal " << signal;
    }
    EXPECT_FALSE(blocks(mask, SIGSEGV)) << name << ": a fault must reach the thread that caused it";
  }
  EXPECT_EQ(blocked_signals("/proc/thread-self"), caller_mask) << "starting them changed the caller's mask";
  holder.unlock();
}

}  // namespace
}  // namespace lockbridge::testing
