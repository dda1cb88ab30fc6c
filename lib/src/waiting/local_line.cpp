#include "local_line.hpp"

#include <algorithm>
#include <iterator>
#include <unordered_map>
#include <utility>

namespace lockbridge::detail {

std::shared_ptr<LocalLine> LocalLine::for_lock(const std::string& identity) {
  static std::mutex registry_mutex;
  // Never destroyed: a Mutex may be destroyed during static destruction.
  static auto* registry = new std::unordered_map<std::string, std::weak_ptr<LocalLine>>();
  static std::size_t sweep_at = 64;
  std::lock_guard lock(registry_mutex);
  if (auto line = (*registry)[identity].lock()) return line;
  auto line = std::make_shared<LocalLine>();
  (*registry)[identity] = line;
  // Drop the lines nobody uses any more, whenever the registry has doubled: it stays as small as
  // the live locks, at a constant cost per new line.
  if (registry->size() >= sweep_at) {
    std::erase_if(*registry, [](const auto& entry) { return entry.second.expired(); });
    sweep_at = std::max<std::size_t>(64, 2 * registry->size());
  }
  return line;
}

LocalLine::Place::Place(std::shared_ptr<LocalLine> line) : line_(std::move(line)) {
  std::lock_guard lock(line_->mutex_);
  it_ = line_->waiters_.insert(line_->waiters_.end(), line_->next_id_++);
  joined_ = true;
}

LocalLine::Place::Place(Place&& other) noexcept
    : line_(std::move(other.line_)), it_(other.it_), joined_(std::exchange(other.joined_, false)) {}

LocalLine::Place::~Place() {
  if (!joined_) return;
  {
    std::lock_guard lock(line_->mutex_);
    line_->waiters_.erase(it_);
  }
  line_->changed_.notify_all();  // the next one may be first now
}

bool LocalLine::Place::wait_for_turn(Clock::time_point deadline) {
  std::unique_lock lock(line_->mutex_);
  return line_->changed_.wait_until(lock, deadline, [&] { return line_->waiters_.begin() == it_; });
}

void LocalLine::held_here(Clock::time_point until) {
  std::lock_guard lock(mutex_);
  held_ = true;
  held_until_ = until;
}

void LocalLine::released_here() {
  {
    std::lock_guard lock(mutex_);
    held_ = false;
  }
  changed_.notify_all();
}

bool LocalLine::wait_while_held_here(Clock::time_point until) {
  std::unique_lock lock(mutex_);
  if (!held_) return false;
  const Clock::time_point limit = std::min(until, held_until_);
  changed_.wait_until(lock, limit, [&] { return !held_; });
  return true;
}

}  // namespace lockbridge::detail
