// One acquisition of one lock, shared by its Mutex (the holder's thread) and the Client's
// LeaseKeeper (the renewal thread): the value in Redis, how long the lease is valid on our steady
// clock, and how the holder is told that it was lost.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <utility>

#include "lockbridge/error.hpp"
#include "lockbridge/observer.hpp"

namespace lockbridge::detail {

class LockStrategy;

class Lease {
 public:
  using Clock = std::chrono::steady_clock;

  // What the watchdog does for this lease; nullopt in Lease::renewal = no renewals, only the
  // notice when the lease runs out.
  struct Renewal {
    std::chrono::milliseconds lease;  // the lease each renewal asks for (renewed every lease / 3)
    Clock::time_point hold_deadline;  // renewals never carry the lease past this (max_hold)
    // A grant's top-up (no watchdog): one renewal, halfway through the granted lease, to
    // hold_deadline (docs/design.md §10.6).
    bool once = false;
  };

  // How the holder is told of a loss: the error its handler gets, and why (for the observer).
  using LossNotice = std::function<void(const Error&, LeaseLossReason)>;

  // `observed`: an Observer wants the reason of a loss, which may cost the watchdog one more read
  // (was the key deleted or taken?).
  Lease(std::shared_ptr<const LockStrategy> strategy, std::string key, std::string value, Clock::time_point valid_until,
        std::optional<std::uint64_t> fence, std::optional<Renewal> renewal, LossNotice on_lost, bool observed);

  const std::shared_ptr<const LockStrategy> strategy;
  const std::string key;
  const std::optional<std::uint64_t> fence;
  const std::optional<Renewal> renewal;
  const bool observed;

  // Whoever talks to Redis about this lease (the holder's extend and release, the watchdog's
  // renewal) claims its I/O for the round trip, so a renewal never races an extend or a release
  // with a stale value. The holder waits for a claim; the watchdog only tries, and comes back
  // later. A claim, not a held mutex: the watchdog claims a whole batch of leases at once.
  class IoClaim {
   public:
    IoClaim() = default;
    IoClaim(IoClaim&& other) noexcept : lease_(std::exchange(other.lease_, nullptr)) {}
    IoClaim& operator=(IoClaim&& other) noexcept;
    IoClaim(const IoClaim&) = delete;
    IoClaim& operator=(const IoClaim&) = delete;
    ~IoClaim();
    explicit operator bool() const noexcept { return lease_ != nullptr; }

   private:
    friend class Lease;
    explicit IoClaim(Lease* lease) noexcept : lease_(lease) {}
    Lease* lease_ = nullptr;
  };
  IoClaim claim_io();      // waits while the watchdog renews
  IoClaim try_claim_io();  // empty when someone else has the claim

  struct Snapshot {
    std::string value;
    Clock::time_point valid_until;
    bool held = false;  // neither released nor lost
  };
  Snapshot snapshot() const;

  // After a successful extend or renewal.
  void renewed(std::string value, Clock::time_point valid_until);
  // The holder let go. No notice.
  void released();
  // The lease is gone behind the holder's back, or ran out: tells the holder once (the callback,
  // then the stop token). Returns false if it was already released or lost. Never throws.
  bool lost(const Error& why, LeaseLossReason reason) noexcept;

  std::stop_token stop_token() const noexcept { return stop_.get_token(); }

 private:
  const LossNotice on_lost_;
  std::stop_source stop_;  // requested when the lease is released or lost

  void release_io() noexcept;

  mutable std::mutex mutex_;
  std::condition_variable io_released_;
  bool io_claimed_ = false;
  std::string value_;
  Clock::time_point valid_until_;
  enum class State { held, released, lost } state_ = State::held;
};

}  // namespace lockbridge::detail
