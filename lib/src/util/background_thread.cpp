#include "util/background_thread.hpp"

#include <pthread.h>
#include <signal.h>

#include <utility>

namespace lockbridge::detail {

namespace {

// The signals sent to a process, rather than caused by what a thread does; job control's stop
// and continue (SIGSTOP, SIGCONT) act on the whole process whatever the masks say.
sigset_t process_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (const int signal : {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGCHLD, SIGWINCH, SIGPIPE,
                           SIGTSTP, SIGTTIN, SIGTTOU}) {
    sigaddset(&set, signal);
  }
  return set;
}

// Blocks the process signals in the calling thread for its lifetime, so that a thread started
// meanwhile inherits the mask from its first instruction (a mask set inside the new thread would
// leave a window where a signal could land on it).
class ProcessSignalsBlocked {
 public:
  ProcessSignalsBlocked() {
    const sigset_t blocked = process_signals();
    pthread_sigmask(SIG_BLOCK, &blocked, &previous_);
  }
  ~ProcessSignalsBlocked() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  ProcessSignalsBlocked(const ProcessSignalsBlocked&) = delete;
  ProcessSignalsBlocked& operator=(const ProcessSignalsBlocked&) = delete;

 private:
  sigset_t previous_;
};

}  // namespace

std::thread start_background_thread(const char* name, std::function<void()> body) {
  const ProcessSignalsBlocked blocked;
  return std::thread([name, body = std::move(body)] {
    pthread_setname_np(pthread_self(), name);  // a name too long is refused, and harmless
    body();
  });
}

}  // namespace lockbridge::detail
