#include "observe/lock_events.hpp"

#include <atomic>
#include <utility>

namespace lockbridge {

std::string_view to_string(LeaseLossReason reason) noexcept {
  switch (reason) {
    case LeaseLossReason::expired:
      return "expired";
    case LeaseLossReason::deleted:
      return "deleted";
    case LeaseLossReason::taken:
      return "taken";
    case LeaseLossReason::connection:
      return "connection";
    case LeaseLossReason::replication:
      return "replication";
  }
  return "unknown";
}

namespace detail {

std::string_view strategy_label(const MutexOptions& options) noexcept {
  switch (options.strategy) {
    case StrategyKind::token:
      return "token";
    case StrategyKind::redisson:
      return "redisson";
    case StrategyKind::legacy:
      return options.faithful() ? "legacy_faithful" : "legacy_hardened";
  }
  return "unknown";
}

LockEvents::LockEvents(std::shared_ptr<Observer> observer, EventQueue& queue, std::string key,
                       std::string_view strategy)
    : observer_(std::move(observer)), queue_(&queue), key_(std::move(key)), strategy_(strategy) {}

template <class Event, class Make>
void LockEvents::post(void (Observer::*callback)(const Event&), Make make) const noexcept {
  if (queue_ != nullptr) post_event(observer_, *queue_, callback, std::move(make));
}

HoldId LockEvents::next_hold() noexcept {
  static std::atomic<HoldId> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

void LockEvents::acquired(HoldId hold, Duration wait, int attempts, std::optional<std::uint64_t> fence,
                          bool starved) const noexcept {
  post(&Observer::acquired, [&] { return AcquiredEvent{base(), hold, wait, attempts, fence, starved}; });
}

void LockEvents::not_acquired(Duration wait, int attempts, std::error_code error, bool starved) const noexcept {
  post(&Observer::not_acquired, [&] { return NotAcquiredEvent{base(), wait, attempts, error, starved}; });
}

void LockEvents::starving(Duration wait) const noexcept {
  post(&Observer::starving, [&] { return StarvingEvent{base(), wait}; });
}

void LockEvents::released(HoldId hold, Duration held, std::error_code error, bool handed_over) const noexcept {
  post(&Observer::released, [&] { return ReleasedEvent{base(), hold, held, error, handed_over}; });
}

void LockEvents::lease_lost(HoldId hold, LeaseLossReason reason, Duration held, std::string message) const noexcept {
  post(&Observer::lease_lost, [&] { return LeaseLostEvent{base(), hold, reason, held, std::move(message)}; });
}

}  // namespace detail
}  // namespace lockbridge
