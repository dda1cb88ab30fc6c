// The threads lockbridge starts for itself (the lease keeper, the release notifier, the observer's
// event queue): named, so `top -H`, gdb and /proc show whose they are, and deaf to the signals a
// process is sent to ask something of it (SIGINT, SIGTERM, SIGHUP, ...). Those then run the
// application's handlers on the application's own threads, and a program that takes them with
// sigwait() or signalfd need not know of ours. Faults (SIGSEGV, SIGBUS, ...) stay unblocked: they
// concern the thread that caused them.
#pragma once

#include <functional>
#include <thread>

namespace lockbridge::detail {

// Starts `body` on a new thread named `name` (at most 15 characters, the kernel's limit) with the
// signals above blocked. The calling thread's own signal mask is left as it was.
std::thread start_background_thread(const char* name, std::function<void()> body);

}  // namespace lockbridge::detail
