#include "redis/connection_pool.hpp"

#include <algorithm>

#include "lockbridge/error.hpp"

namespace lockbridge::detail {

ConnectionPool::ConnectionPool(std::shared_ptr<Endpoint> endpoint)
    : endpoint_(std::move(endpoint)), options_(endpoint_->options()), backoff_(options_.reconnect_backoff) {
  idle_.reserve(options_.pool_size);  // give_back() is noexcept: it must never reallocate
}

ConnectionPool::PooledConnection ConnectionPool::borrow(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  // An idle connection the server has closed would fail the caller's command, and the server may
  // be back already (a restart) or replaced (a failover): drop it here, and let the Endpoint know
  // before it is asked whether the master moved. Only the one that would be handed out is checked
  // (one poll per borrow); the others are when their turn comes.
  bool dropped = false;
  while (!idle_.empty() && idle_.back()->closed_by_peer()) {
    endpoint_->connection_broke(*idle_.back());
    idle_.pop_back();
    --open_;
    dropped = true;
  }
  if (dropped) slot_freed_.notify_all();  // a borrower waiting for a free slot may connect now
  if (!backoff_.active()) {               // (the sentinels are not asked faster than the master is dialled)
    lock.unlock();
    endpoint_->refresh_if_stale(deadline);  // a connection broke: with Sentinel, has the master moved?
    lock.lock();
  }
  // Connections to a former master are of no use: writes there would be lost or refused.
  std::erase_if(idle_, [&](const std::unique_ptr<Connection>& idle) {
    if (!endpoint_->outdated(*idle)) return false;
    --open_;
    return true;
  });
  const auto now = std::chrono::steady_clock::now();
  const auto timeout_at = now + options_.command_timeout;
  const bool callers_deadline_first = deadline > now && deadline < timeout_at;
  const auto wait_until = callers_deadline_first ? deadline : timeout_at;
  while (idle_.empty() && open_ >= options_.pool_size) {
    if (slot_freed_.wait_until(lock, wait_until) == std::cv_status::timeout && idle_.empty() &&
        open_ >= options_.pool_size) {
      throw Error(Errc::timeout, "all " + std::to_string(options_.pool_size) + " connections to " + url().redacted() +
                                     (callers_deadline_first ? " stayed busy until the caller's deadline"
                                                             : " stayed busy for the command timeout"));
    }
  }
  if (!idle_.empty()) {
    auto connection = std::move(idle_.back());
    idle_.pop_back();
    return PooledConnection(*this, std::move(connection));
  }
  if (backoff_.active()) throw backoff_.refusal();
  ++open_;  // reserve the slot, then connect without holding the lock
  lock.unlock();
  try {
    auto connection = endpoint_->connect();
    lock.lock();
    backoff_.succeeded();
    lock.unlock();
    return PooledConnection(*this, std::move(connection));
  } catch (const Error& error) {
    lock.lock();
    --open_;
    backoff_.failed(error);
    lock.unlock();
    slot_freed_.notify_one();
    throw;
  }
}

void ConnectionPool::give_back(std::unique_ptr<Connection> connection) noexcept {
  {
    std::lock_guard lock(mutex_);
    if (connection->broken()) {
      endpoint_->connection_broke(*connection);
      --open_;
    } else {
      idle_.push_back(std::move(connection));
    }
  }
  slot_freed_.notify_one();
  // A broken connection is destroyed here, outside the lock.
}

}  // namespace lockbridge::detail
