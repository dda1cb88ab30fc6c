#include "lockbridge/compat/held_lock.hpp"

#include <utility>

namespace lockbridge::compat::detail {

namespace {
MutexOptions validated(MutexOptions options) {
  options.validate();
  return options;
}
std::string checked(std::string key) {
  if (key.empty()) throw Error(Errc::bad_option, "lock key must not be empty");
  return key;
}
}  // namespace

HeldLock::HeldLock(std::string key, MutexOptions options)
    : key_(checked(std::move(key))), options_(validated(std::move(options))) {}

bool HeldLock::acquire(const Client& client, std::chrono::milliseconds timeout) {
  if (timeout < std::chrono::milliseconds::zero()) return false;
  Mutex next(client, key_, options_);
  if (!next.try_lock_for(timeout)) return false;
  if (mutex_) mutex_->abandon();
  mutex_.emplace(std::move(next));
  holding_ = true;
  return true;
}

bool HeldLock::release() noexcept {
  if (!holding_) return false;
  holding_ = false;
  mutex_->unlock();
  return true;
}

}  // namespace lockbridge::compat::detail
