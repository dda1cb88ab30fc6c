// The bench's clients, as threads or as forked processes (--procs). Destruction stops and reaps
// every one of them, whatever happened, so a run never leaves a process behind.
#pragma once

#include <sys/types.h>

#include <memory>
#include <thread>
#include <vector>

#include "cli_common.hpp"
#include "shared_run.hpp"
#include "worker.hpp"

namespace lockbridge::tools::bench {

class Fleet {
 public:
  // Starts one client per spec. The specs must outlive the fleet.
  Fleet(const std::vector<WorkerSpec>& specs, SharedRun& run, bool processes);
  ~Fleet();
  Fleet(const Fleet&) = delete;
  Fleet& operator=(const Fleet&) = delete;

  bool processes() const noexcept { return processes_; }
  pid_t pid(int client) const { return pids_.at(static_cast<std::size_t>(client)); }

  // Processes only: stops the client (SIGSTOP) and waits until it is stopped.
  void suspend(int client);
  void resume(int client);
  // Processes only: SIGKILL; the client counts as finished from then on.
  void kill_client(int client);
  int killed() const noexcept { return killed_; }

  // Waits for every client to leave its loop (the caller has set stop, or the tickets ran out).
  void join();

 private:
  bool processes_;
  // Threads: ends their waits once the run stops (each process has one of its own).
  std::unique_ptr<StopWhen> stop_;
  std::vector<std::thread> threads_;
  std::vector<pid_t> pids_;
  int killed_ = 0;
};

}  // namespace lockbridge::tools::bench
