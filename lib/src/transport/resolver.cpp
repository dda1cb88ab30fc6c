#include "transport/resolver.hpp"

#include <pthread.h>

#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <utility>

#include "util/background_thread.hpp"

namespace lockbridge::detail {
namespace {

// Lookups of one host:port that may run at once. Beyond it a connect joins the latest lookup even
// after a connect gave up on it, so a silent DNS server costs a few threads per name, not one per
// connect attempt.
constexpr int kMaxLookupsPerName = 4;

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
  if (status != 0) return nullptr;
  try {
    return std::shared_ptr<const addrinfo>(found, AddrInfoDeleter{});
  } catch (const std::bad_alloc&) {  // the control block: the deleter has freed `found`
    status = EAI_MEMORY;
    return nullptr;
  }
}

// One lookup: its answer, for every connect waiting on it.
struct Lookup {
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  int status = 0;
  std::shared_ptr<const addrinfo> found;
};

// The lookups of one host:port. `latest` is joined by new connects while `joinable`: until it
// answers, or until a connect waiting on it gives up (a query lost in the network waits out
// resolv.conf's timeout; a new query may well be answered at once).
struct Name {
  std::shared_ptr<Lookup> latest;
  bool joinable = false;
  int running = 0;
};

struct InFlight {
  std::mutex mutex;                   // guards `names` and every Name in it
  std::map<std::string, Name> names;  // by "host\0port"
};

InFlight& in_flight();

// fork() copies the map but not the lookup threads: a child would wait on lookups no thread of its
// own finishes, and find the mutex locked for ever if a thread held it then. So fork waits for the
// mutex, and the child starts with no lookups in flight.
void before_fork() { in_flight().mutex.lock(); }
void after_fork_in_parent() { in_flight().mutex.unlock(); }
void after_fork_in_child() {
  in_flight().names.clear();
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
    const std::lock_guard<std::mutex> names_guard(in_flight().mutex);
    const auto it = in_flight().names.find(id);
    if (it != in_flight().names.end()) {  // absent only in a child forked meanwhile
      Name& name = it->second;
      --name.running;
      // Connects from now on start a lookup of their own: its answer may differ (a failover).
      if (name.latest == lookup) name.latest.reset();
      if (name.running == 0 && !name.latest) in_flight().names.erase(it);
    }
  }
  const std::lock_guard<std::mutex> guard(lookup->mutex);
  lookup->status = status;
  lookup->found = std::move(found);
  lookup->done = true;
  lookup->finished.notify_all();
}

std::shared_ptr<Lookup> start_lookup(const std::string& host, const std::string& service, const std::string& id) {
  InFlight& state = in_flight();
  const std::lock_guard<std::mutex> guard(state.mutex);
  Name& name = state.names[id];
  if (name.latest && (name.joinable || name.running >= kMaxLookupsPerName)) return name.latest;
  try {
    auto lookup = std::make_shared<Lookup>();
    start_background_thread("lockbridge-dns", [lookup, host, service, id] {
      run_lookup(lookup, host, service, id);
    }).detach();
    name.latest = lookup;
    name.joinable = true;
    ++name.running;
    return lookup;
  } catch (const std::exception& error) {  // no thread or memory to be had (RLIMIT_NPROC)
    if (name.running == 0 && !name.latest) state.names.erase(id);
    throw TransportError(Errc::io, "cannot look up '" + host + "': " + error.what());
  }
}

// A connect gave up on `lookup`: the next one asks DNS again rather than wait on it.
void stop_joining(const std::string& id, const std::shared_ptr<Lookup>& lookup) {
  const std::lock_guard<std::mutex> guard(in_flight().mutex);
  const auto it = in_flight().names.find(id);
  if (it != in_flight().names.end() && it->second.latest == lookup) it->second.joinable = false;
}

[[noreturn]] void unresolved(const std::string& host, int status) {
  throw TransportError(Errc::io, "cannot resolve '" + host + "': " + gai_strerror(status));
}

}  // namespace

std::shared_ptr<const addrinfo> resolve(const std::string& host, int port, Deadline deadline) try {
  const std::string service = std::to_string(port);
  int status = 0;
  if (auto address = lookup_now(host, service, AI_NUMERICHOST, status)) return address;
  if (status != EAI_NONAME) unresolved(host, status);  // an address, but not one of ours (EAI_FAMILY...)

  const std::string id = host + '\0' + service;
  const std::shared_ptr<Lookup> lookup = start_lookup(host, service, id);
  {
    std::unique_lock<std::mutex> lock(lookup->mutex);
    if (lookup->finished.wait_until(lock, deadline, [&] { return lookup->done; })) {
      if (lookup->status != 0) unresolved(host, lookup->status);
      return lookup->found;
    }
  }
  stop_joining(id, lookup);
  throw TransportError(Errc::timeout,
                       "no answer from DNS for '" + host + "' within the connect timeout (resolv.conf's name servers)");
} catch (const std::bad_alloc&) {
  throw TransportError(Errc::io, "cannot look up '" + host + "': out of memory");
}

}  // namespace lockbridge::detail
