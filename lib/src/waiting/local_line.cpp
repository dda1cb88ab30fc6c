#include "waiting/local_line.hpp"

#include <algorithm>
#include <unordered_map>

namespace lockbridge::detail {

struct LocalLine::Waiter {
  std::condition_variable_any woken;  // a thread's (the _any kind: a stop request wakes it)
  std::function<void()> changed;      // an event-driven waiter's (Place::on_change)
};

std::shared_ptr<LocalLine> LocalLine::for_lock(const std::string& name) {
  static std::mutex registry_mutex;
  // Never destroyed: a Mutex may be destroyed during static destruction.
  static auto* registry = new std::unordered_map<std::string, std::weak_ptr<LocalLine>>();
  static std::size_t sweep_at = 64;
  std::lock_guard lock(registry_mutex);
  if (auto line = (*registry)[name].lock()) return line;
  auto line = std::make_shared<LocalLine>();
  (*registry)[name] = line;
  // Drop the lines nobody uses any more, whenever the registry has doubled: it stays as small as
  // the live locks, at a constant cost per new line.
  if (registry->size() >= sweep_at) {
    std::erase_if(*registry, [](const auto& entry) { return entry.second.expired(); });
    sweep_at = std::max<std::size_t>(64, 2 * registry->size());
  }
  return line;
}

void LocalLine::wake_first() {
  if (waiters_.empty()) return;
  Waiter& first = waiters_.front();
  first.woken.notify_one();
  if (first.changed) first.changed();
}

LocalLine::Place::Place(std::shared_ptr<LocalLine> line) : line_(std::move(line)) {
  std::lock_guard lock(line_->mutex_);
  it_ = line_->waiters_.emplace(line_->waiters_.end());
}

LocalLine::Place::~Place() {
  std::lock_guard lock(line_->mutex_);
  const bool was_first = it_ == line_->waiters_.begin();
  line_->waiters_.erase(it_);
  if (was_first) line_->wake_first();  // the next one is first now
}

bool LocalLine::Place::wait_for_turn(Clock::time_point deadline, const std::stop_token& stop) {
  std::unique_lock lock(line_->mutex_);
  return it_->woken.wait_until(lock, stop, deadline, [&] { return line_->waiters_.begin() == it_; });
}

void LocalLine::Place::wait_while_held_here(Clock::time_point until, const std::stop_token& stop) {
  std::unique_lock lock(line_->mutex_);
  if (!line_->held_) return;
  it_->woken.wait_until(lock, stop, std::min(until, line_->held_until_), [&] { return !line_->held_; });
}

void LocalLine::Place::on_change(std::function<void()> changed) {
  std::lock_guard lock(line_->mutex_);
  it_->changed = std::move(changed);
}

bool LocalLine::Place::first_now() const {
  std::lock_guard lock(line_->mutex_);
  return line_->waiters_.begin() == it_;
}

std::optional<LocalLine::Clock::time_point> LocalLine::Place::held_until_now() const {
  std::lock_guard lock(line_->mutex_);
  if (!line_->held_) return std::nullopt;
  return line_->held_until_;
}

std::uint64_t LocalLine::held_here(Clock::time_point until) {
  std::lock_guard lock(mutex_);
  held_ = true;
  held_until_ = until;
  return ++hold_;
}

void LocalLine::extended_here(std::uint64_t hold, Clock::time_point until) {
  std::lock_guard lock(mutex_);
  if (held_ && hold == hold_) held_until_ = until;
}

void LocalLine::released_here(std::uint64_t hold) {
  std::lock_guard lock(mutex_);
  if (!held_ || hold != hold_) return;
  held_ = false;
  wake_first();
}

std::size_t LocalLine::waiting() const {
  std::lock_guard lock(mutex_);
  return waiters_.size();
}

}  // namespace lockbridge::detail
