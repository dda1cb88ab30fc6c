#include "lockbridge/stripes.hpp"

#include <utility>

#include "lockbridge/error.hpp"

namespace lockbridge {

namespace {
std::string checked_prefix(std::string prefix) {
  if (prefix.empty()) throw Error(Errc::bad_option, "stripes: the key prefix must not be empty");
  return prefix;
}

std::size_t checked_count(std::size_t stripe_count) {
  if (stripe_count == 0 || stripe_count > LockStripes::kMaxStripes) {
    throw Error(Errc::bad_option, "stripes: the stripe count must be between 1 and " +
                                      std::to_string(LockStripes::kMaxStripes) + ", got " +
                                      std::to_string(stripe_count));
  }
  return stripe_count;
}
}  // namespace

LockStripes::LockStripes(Client client, std::string prefix, std::size_t stripe_count, MutexOptions options)
    : client_(std::move(client)),
      prefix_(checked_prefix(std::move(prefix))),
      stripe_count_(checked_count(stripe_count)),
      options_(std::move(options)) {
  options_.validate();  // here, so that mutex_for() cannot refuse them later
}

std::uint64_t LockStripes::stable_hash(std::string_view resource_id) noexcept {
  // The published FNV-1a constants; bytes taken as unsigned, whatever the signedness of char.
  std::uint64_t hash = 14695981039346656037ULL;
  for (const char c : resource_id) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ULL;
  }
  return hash;
}

std::size_t LockStripes::stripe_of(std::string_view resource_id) const noexcept {
  return static_cast<std::size_t>(stable_hash(resource_id) % stripe_count_);
}

std::string LockStripes::key_for(std::string_view resource_id) const {
  return prefix_ + ":stripe:" + std::to_string(stripe_of(resource_id));
}

Mutex LockStripes::mutex_for(std::string_view resource_id) const {
  return Mutex(client_, key_for(resource_id), options_);
}

}  // namespace lockbridge
