#include "lockbridge/shared_mutex.hpp"

#include <memory>
#include <utility>

#include "core/lock_core.hpp"
#include "core/rwlock_sides.hpp"
#include "core/single_key_target.hpp"
#include "redis/client_state.hpp"

namespace lockbridge {

namespace {

std::unique_ptr<detail::LockCore> side(const std::shared_ptr<detail::ClientState>& state, const std::string& key,
                                       const MutexOptions& options, std::shared_ptr<detail::LockStrategy> strategy) {
  auto target = std::make_unique<detail::SingleKeyTarget>(state, key, options, std::move(strategy));
  return std::make_unique<detail::LockCore>(state, std::move(target), options, "SharedMutex");
}

}  // namespace

SharedMutex::SharedMutex(Client client, std::string key, MutexOptions options) {
  if (key.empty()) throw Error(Errc::bad_option, "lock key must not be empty");
  const std::shared_ptr<detail::ClientState>& state = client.state();
  detail::RwLockSides sides = detail::rwlock_sides(*state, std::move(options), "SharedMutex");
  writer_ = side(state, key, sides.options, std::move(sides.writer));
  reader_ = side(state, key, sides.options, std::move(sides.reader));
}

SharedMutex::~SharedMutex() {
  // The read side last: a downgraded writer's unlock leaves its reads in place.
  writer_.reset();
  reader_.reset();
}
SharedMutex::SharedMutex(SharedMutex&&) noexcept = default;
SharedMutex& SharedMutex::operator=(SharedMutex&& other) noexcept {
  writer_ = std::move(other.writer_);
  reader_ = std::move(other.reader_);
  last_error_ = other.last_error_;
  return *this;
}

namespace {
// A reader that asks for the write side would wait for itself: refused at once.
void refuse_upgrade(const detail::LockCore& reader) {
  if (reader.holds()) {
    throw Error(Errc::bad_option, "SharedMutex: this object reads; a reader cannot upgrade (unlock_shared() first)");
  }
}
}  // namespace

void SharedMutex::lock() {
  refuse_upgrade(*reader_);
  writer_->lock();
}
bool SharedMutex::try_lock() {
  refuse_upgrade(*reader_);
  return writer_->try_once();
}
void SharedMutex::lock_shared() { reader_->lock(); }
bool SharedMutex::try_lock_shared() { return reader_->try_once(); }

bool SharedMutex::try_lock_until_steady(bool shared, std::chrono::steady_clock::time_point deadline,
                                        std::stop_token stop) {
  if (!shared) refuse_upgrade(*reader_);
  return (shared ? reader_ : writer_)->acquire_until(deadline, std::move(stop));
}

namespace {
// Releases `side`. An unlock of the side not held while the other is (unlock() of a reader) is a
// caller's mistake that would otherwise leave the other hold in place unnoticed: bad_option.
std::error_code release_side(detail::LockCore& side, const detail::LockCore& other) noexcept {
  if (!side.holds() && other.holds()) return make_error_code(Errc::bad_option);
  side.release();
  return side.last_error();
}
}  // namespace

void SharedMutex::unlock() noexcept {
  if (writer_) last_error_ = release_side(*writer_, *reader_);
}

void SharedMutex::unlock_shared() noexcept {
  if (reader_) last_error_ = release_side(*reader_, *writer_);
}

bool SharedMutex::owns_lock() const noexcept { return writer_ && writer_->holds(); }
bool SharedMutex::owns_shared() const noexcept { return reader_ && reader_->holds(); }
std::chrono::milliseconds SharedMutex::valid_for() const noexcept {
  return writer_ ? writer_->valid_for() : std::chrono::milliseconds::zero();
}
std::chrono::milliseconds SharedMutex::valid_for_shared() const noexcept {
  return reader_ ? reader_->valid_for() : std::chrono::milliseconds::zero();
}

void SharedMutex::on_lease_lost(std::function<void(const Error&)> handler) {
  writer_->on_lease_lost(handler);
  reader_->on_lease_lost(std::move(handler));
}
void SharedMutex::on_release_error(std::function<void(const Error&)> handler) {
  writer_->on_release_error(handler);
  reader_->on_release_error(std::move(handler));
}
std::error_code SharedMutex::last_error() const noexcept { return last_error_; }

LockInfo SharedMutex::inspect() const {
  LockInfo info = reader_->inspect();
  if (!info.held_by_me && writer_->holds()) info.held_by_me = writer_->inspect().held_by_me;
  return info;
}

const std::string& SharedMutex::key() const noexcept { return writer_->target().key(); }
const MutexOptions& SharedMutex::options() const noexcept { return writer_->options(); }

}  // namespace lockbridge
