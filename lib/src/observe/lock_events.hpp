// The events of one lock (LockCore), posted to its Client's EventQueue for its Observer: the lock's
// own (MutexOptions::observer), else the Client's. Without an observer nothing is built or posted.
// Copies are cheap and may outlive the lock (a Lease's loss notice carries one), not the Client.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "lockbridge/observer.hpp"
#include "lockbridge/options.hpp"
#include "observe/event_queue.hpp"

namespace lockbridge::detail {

// "token", "legacy_hardened", "legacy_faithful", "redisson": the label events and metrics use.
std::string_view strategy_label(const MutexOptions& options) noexcept;

class LockEvents {
 public:
  using Duration = std::chrono::nanoseconds;

  LockEvents() = default;  // observes nothing
  LockEvents(std::shared_ptr<Observer> observer, EventQueue& queue, std::string key, std::string_view strategy);

  bool observed() const noexcept { return observer_ != nullptr; }

  // A new HoldId for an acquisition.
  static HoldId next_hold() noexcept;

  void acquired(HoldId hold, Duration wait, int attempts, std::optional<std::uint64_t> fence,
                bool starved) const noexcept;
  void not_acquired(Duration wait, int attempts, std::error_code error, bool starved) const noexcept;
  void starving(Duration wait) const noexcept;
  void released(HoldId hold, Duration held, std::error_code error, bool handed_over) const noexcept;
  void lease_lost(HoldId hold, LeaseLossReason reason, Duration held, std::string message) const noexcept;

 private:
  // Builds the event with `make` and posts it, when observed.
  template <class Event, class Make>
  void post(void (Observer::*callback)(const Event&), Make make) const noexcept;
  LockEvent base() const { return LockEvent{key_, strategy_}; }

  std::shared_ptr<Observer> observer_;
  EventQueue* queue_ = nullptr;
  std::string key_;
  std::string_view strategy_;
};

}  // namespace lockbridge::detail
