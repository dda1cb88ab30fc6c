#include "shared_run.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>
#include <stdexcept>

namespace lockbridge::tools::bench {

static_assert(std::atomic<std::int64_t>::is_always_lock_free && std::atomic<std::uint64_t>::is_always_lock_free &&
                  std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free,
              "atomics in memory shared with forked clients must be lock-free");

std::int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

namespace {
std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }
}  // namespace

SharedRun::SharedRun(int clients, std::size_t samples_per_client) : clients_(clients), capacity_(samples_per_client) {
  const std::size_t control_bytes = round_up(sizeof(RunControl), 64);
  const std::size_t slot_bytes = round_up(sizeof(ClientSlot) * static_cast<std::size_t>(clients), 64);
  bytes_ = control_bytes + slot_bytes + sizeof(HoldSample) * capacity_ * static_cast<std::size_t>(clients);
  // MAP_NORESERVE: only the pages a run writes cost memory, however large the capacity.
  mapping_ = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapping_ == MAP_FAILED) throw std::runtime_error("bench: cannot map shared memory for the run");
  auto* base = static_cast<unsigned char*>(mapping_);
  control_ = new (base) RunControl();
  slots_ = reinterpret_cast<ClientSlot*>(base + control_bytes);
  for (int i = 0; i < clients; ++i) new (&slots_[i]) ClientSlot();
  samples_ = reinterpret_cast<HoldSample*>(base + control_bytes + slot_bytes);
}

SharedRun::~SharedRun() { munmap(mapping_, bytes_); }

void SharedRun::record(int client, const HoldSample& sample) noexcept {
  ClientSlot& slot = slots_[client];
  const std::uint64_t n = slot.recorded.load(std::memory_order_relaxed);
  if (n >= capacity_) return;
  samples_[static_cast<std::size_t>(client) * capacity_ + n] = sample;
  slot.recorded.store(n + 1, std::memory_order_release);
}

void SharedRun::record_unacquired(int client, std::int64_t wait_ns) noexcept {
  ClientSlot& slot = slots_[client];
  const std::uint32_t n = slot.unacquired.load(std::memory_order_relaxed);
  if (n >= kMaxUnacquiredWaits) return;
  slot.unacquired_wait_us[n] = static_cast<float>(wait_ns) / 1000.0F;
  slot.unacquired.store(n + 1, std::memory_order_release);
}

void SharedRun::note_error(int client, const std::string& message) noexcept {
  ClientSlot& slot = slots_[client];
  if (slot.errors.fetch_add(1, std::memory_order_relaxed) != 0) return;  // keep the first one
  const std::size_t n = std::min(message.size(), sizeof(slot.first_error) - 1);
  std::memcpy(slot.first_error, message.data(), n);
  slot.first_error[n] = '\0';
}

std::span<const HoldSample> SharedRun::samples(int client) const noexcept {
  const std::size_t n = std::min<std::uint64_t>(slots_[client].recorded.load(std::memory_order_acquire), capacity_);
  return {samples_ + static_cast<std::size_t>(client) * capacity_, n};
}

std::span<const float> SharedRun::unacquired_waits_us(int client) const noexcept {
  const ClientSlot& slot = slots_[client];
  return {slot.unacquired_wait_us, std::min(slot.unacquired.load(std::memory_order_acquire), kMaxUnacquiredWaits)};
}

}  // namespace lockbridge::tools::bench
