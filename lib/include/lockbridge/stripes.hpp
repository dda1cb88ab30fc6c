// lockbridge: striped locks, many resource ids onto a fixed number of lock keys.
//
// LockStripes maps any resource id onto one of `stripe_count` keys, "<prefix>:stripe:<index>", and
// gives a Mutex on that key. Lock segmentation, as Redis lock write-ups advise it: locking a million orders by order id
// would create (and leave to its TTL) a key per order; with stripes the key count stays bounded by
// the stripe count, whatever the ids. The price is false sharing: two ids that land on the same
// stripe exclude each other although they are unrelated, so more stripes mean fewer needless
// waits. Every process that locks the same resources must use the same prefix and stripe count
// (changing either remaps the ids; do it with the whole fleet stopped).
//
//   lockbridge::LockStripes orders(redis, "orders", 64);
//   lockbridge::Mutex m = orders.mutex_for("order-42");   // the key "orders:stripe:<n>"
//   std::unique_lock guard(m);
//
// Redis Cluster: the stripes spread over the slots like any keys; a prefix with a hash tag
// ("{orders}") puts them all in one slot.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "lockbridge/client.hpp"
#include "lockbridge/export.hpp"
#include "lockbridge/mutex.hpp"

namespace lockbridge {

class LOCKBRIDGE_API LockStripes {
 public:
  static constexpr std::size_t kMaxStripes = 1'000'000;

  // Throws Error{bad_option} for an empty prefix, a stripe count of 0 or above kMaxStripes, or
  // invalid options. Does no I/O.
  LockStripes(Client client, std::string prefix, std::size_t stripe_count, MutexOptions options = {});

  // FNV-1a, 64 bit, of the id's bytes. Stable: the same on every process, platform, compiler and
  // lockbridge version (never std::hash, which is none of these). Changing it would send the ids
  // of a running fleet to different stripes, so processes on the old and the new version would
  // lock the same resource through different keys: it must never change.
  static std::uint64_t stable_hash(std::string_view resource_id) noexcept;

  // stable_hash(id) % stripe_count(). Never throws, does no I/O.
  std::size_t stripe_of(std::string_view resource_id) const noexcept;
  // "<prefix>:stripe:<stripe_of(id)>" (the index in decimal).
  std::string key_for(std::string_view resource_id) const;
  // A new Mutex on key_for(id) with this object's options; one Mutex is one lease holder, so each
  // caller (thread) takes its own. Does no I/O.
  Mutex mutex_for(std::string_view resource_id) const;

  const std::string& prefix() const noexcept { return prefix_; }
  std::size_t stripe_count() const noexcept { return stripe_count_; }
  const MutexOptions& options() const noexcept { return options_; }

 private:
  Client client_;
  std::string prefix_;
  std::size_t stripe_count_;
  MutexOptions options_;
};

}  // namespace lockbridge
