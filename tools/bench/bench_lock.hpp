// A bench client's lock through either front, behind the calls the client's loop makes: the
// blocking Mutex, or the async front's AsyncMutex on an io_context of the client's own, which the
// client's thread runs while each operation is under way (what a service on one event-loop thread
// does). The same loop then measures both fronts, in the same workloads and the same processes.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <system_error>

#include "bench_config.hpp"
#include "lockbridge/mutex.hpp"

namespace lockbridge::tools::bench {

class BenchLock {
 public:
  virtual ~BenchLock() = default;
  // As Mutex's: one attempt; a wait of at most `wait`, ended early (false) once `stop` is
  // requested. Throw Error.
  virtual bool try_lock() = 0;
  virtual bool try_lock_for(std::chrono::nanoseconds wait, std::stop_token stop) = 0;
  // Releases; last_error() says how it went (lease_lost when the key no longer held our value).
  virtual void unlock() = 0;
  virtual std::error_code last_error() const = 0;
  virtual std::optional<std::uint64_t> fence() const = 0;
  // A read/write lock (--read-share): whether the current (or last) acquisition took the read
  // side. Readers may hold together, so the check key counts them apart (worker.cpp).
  virtual bool shared_layout() const { return false; }
  virtual bool reading() const { return false; }
};

// `read_share`: a SharedMutex whose acquisitions read with this probability (percent).
std::unique_ptr<BenchLock> make_bench_lock(Front front, const Client& client, const std::string& key,
                                           const MutexOptions& options, std::optional<int> read_share = std::nullopt);

}  // namespace lockbridge::tools::bench
