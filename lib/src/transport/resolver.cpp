#include "resolver.hpp"

#include <pthread.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <system_error>
#include <utility>

#include "../background_thread.hpp"

namespace lockbridge::detail {
namespace {

struct AddrInfoDeleter {
  void operator()(addrinfo* info) const noexcept { freeaddrinfo(info); }
};

// getaddrinfo with `flags`: what it found, or its error code in `status`.
std::shared_ptr<const addrinfo> lookup_now(const std::string& host, const std::string& service, int flags,
                                           int& status) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = flags;
  addrinfo* found = nullptr;
  status = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
  return status == 0 ? std::shared_ptr<const addrinfo>(found, AddrInfoDeleter{}) : nullptr;
}

// One lookup in flight, shared by every connect that wants its host:port meanwhile.
struct Lookup {
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  int status = 0;
  std::shared_ptr<const addrinfo> found;
};

struct InFlight {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<Lookup>> lookups;  // by "host\0port"
};

InFlight& in_flight();

// fork() copies the map but not the lookup threads: a child would wait on lookups no thread of its
// own finishes, and find the mutex locked for ever if a thread held it then. So fork waits for the
// mutex, and the child starts with no lookups in flight.
void before_fork() { in_flight().mutex.lock(); }
void after_fork_in_parent() { in_flight().mutex.unlock(); }
void after_fork_in_child() {
  in_flight().lookups.clear();
  in_flight().mutex.unlock();
}

// Never destroyed: a lookup thread may still be running when the process's statics are.
InFlight& in_flight() {
  static auto* const state = [] {
    auto* const made = new InFlight;
    ::pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
    return made;
  }();
  return *state;
}

// The lookup's thread: getaddrinfo, then the answer to whoever still waits.
void run_lookup(const std::shared_ptr<Lookup>& lookup, const std::string& host, const std::string& service,
                const std::string& id) {
  int status = 0;
  std::shared_ptr<const addrinfo> found = lookup_now(host, service, 0, status);
  {
    // Connects from now on start a lookup of their own: its answer may differ (a failover).
    const std::lock_guard<std::mutex> in_flight_guard(in_flight().mutex);
    in_flight().lookups.erase(id);
  }
  const std::lock_guard<std::mutex> guard(lookup->mutex);
  lookup->status = status;
  lookup->found = std::move(found);
  lookup->done = true;
  lookup->finished.notify_all();
}

std::shared_ptr<Lookup> start_lookup(const std::string& host, const std::string& service) {
  const std::string id = host + '\0' + service;
  InFlight& state = in_flight();
  const std::lock_guard<std::mutex> guard(state.mutex);
  if (const auto it = state.lookups.find(id); it != state.lookups.end()) return it->second;
  auto lookup = std::make_shared<Lookup>();
  try {
    start_background_thread("lockbridge-dns", [lookup, host, service, id] { run_lookup(lookup, host, service, id); })
        .detach();
  } catch (const std::system_error& error) {  // no thread to be had (RLIMIT_NPROC, memory)
    throw TransportError(Errc::io, "cannot look up '" + host + "': no thread for it: " + error.what());
  }
  state.lookups.emplace(id, lookup);
  return lookup;
}

[[noreturn]] void unresolved(const std::string& host, int status) {
  throw TransportError(Errc::io, "cannot resolve '" + host + "': " + gai_strerror(status));
}

}  // namespace

std::shared_ptr<const addrinfo> resolve(const std::string& host, int port, Deadline deadline) {
  const std::string service = std::to_string(port);
  int status = 0;
  if (auto address = lookup_now(host, service, AI_NUMERICHOST, status)) return address;
  if (status != EAI_NONAME) unresolved(host, status);  // an address, but not one of ours (EAI_FAMILY...)

  const std::shared_ptr<Lookup> lookup = start_lookup(host, service);
  std::unique_lock<std::mutex> lock(lookup->mutex);
  if (!lookup->finished.wait_until(lock, deadline, [&] { return lookup->done; })) {
    throw TransportError(Errc::timeout, "no answer from DNS for '" + host +
                                            "' within the connect timeout (resolv.conf's name servers)");
  }
  if (lookup->status != 0) unresolved(host, lookup->status);
  return lookup->found;
}

}  // namespace lockbridge::detail
