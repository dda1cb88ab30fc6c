#include "fleet.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>

namespace lockbridge::tools::bench {

Fleet::Fleet(const std::vector<WorkerSpec>& specs, SharedRun& run, bool processes) : processes_(processes) {
  const auto stopped = [&run] { return run.control().stop.load(std::memory_order_relaxed); };
  try {
    if (!processes_) stop_ = std::make_unique<StopWhen>(stopped);
    for (const WorkerSpec& spec : specs) {
      if (!processes_) {
        threads_.emplace_back([&spec, &run, stop = stop_->token()] { run_worker(spec, run, stop); });
        continue;
      }
      const pid_t parent = getpid();
      const pid_t pid = fork();
      if (pid < 0) throw std::runtime_error("bench: cannot fork client process " + std::to_string(spec.index));
      if (pid == 0) {
        // A client must never outlive the run: it dies with the conductor.
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(1);
        // Nothing may leave this block but _exit: an exception would unwind the parent's stack as
        // copied here, and run the conductor's destructors (the embedded server's among them).
        try {
          const StopWhen stop(stopped);
          run_worker(spec, run, stop.token());
        } catch (...) {
          _exit(1);
        }
        _exit(0);  // not exit(): the conductor's objects (e.g. the embedded server) are not ours to destroy
      }
      pids_.push_back(pid);
    }
  } catch (...) {
    run.control().stop.store(true);
    join();
    throw;
  }
}

Fleet::~Fleet() {
  for (const pid_t pid : pids_) {
    if (pid > 0) kill(pid, SIGKILL);
  }
  join();
}

void Fleet::suspend(int client) {
  const pid_t client_pid = pid(client);
  kill(client_pid, SIGSTOP);
  int status = 0;
  while (waitpid(client_pid, &status, WUNTRACED) < 0 && errno == EINTR) {
  }
}

void Fleet::resume(int client) { kill(pid(client), SIGCONT); }

void Fleet::kill_client(int client) {
  kill(pid(client), SIGKILL);
  ++killed_;
}

void Fleet::join() {
  for (auto& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  for (pid_t& pid : pids_) {
    if (pid <= 0) continue;
    kill(pid, SIGCONT);  // a suspended client cannot finish
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    pid = -1;
  }
}

}  // namespace lockbridge::tools::bench
