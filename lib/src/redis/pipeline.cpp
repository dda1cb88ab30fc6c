#include "redis/pipeline.hpp"

#include <utility>

namespace lockbridge::detail {

std::shared_ptr<Pipeline> Pipeline::start(EventLoop& loop, std::unique_ptr<Connection> connection) {
  return std::shared_ptr<Pipeline>(new Pipeline(loop, std::move(connection)));
}

Pipeline::Pipeline(EventLoop& loop, std::unique_ptr<Connection> connection)
    : loop_(loop), connection_(std::move(connection)) {
  connection_->drive_by_events();
  descriptor_ = loop_.watch(connection_->fd());
  timer_ = loop_.timer();
}

Pipeline::~Pipeline() {
  if (descriptor_) descriptor_->cancel();
  if (timer_) timer_->cancel();
}

Pipeline::Ticket Pipeline::submit(const std::vector<std::vector<std::string>>& commands, Clock::time_point deadline,
                                  Done done) {
  std::vector<std::vector<std::string_view>> views;
  views.reserve(commands.size());
  for (const auto& command : commands) views.emplace_back(command.begin(), command.end());
  return submit(std::span<const std::vector<std::string_view>>(views), deadline, std::move(done));
}

Pipeline::Ticket Pipeline::submit(std::span<const std::vector<std::string_view>> commands, Clock::time_point deadline,
                                  Done done) {
  const Ticket ticket = first_ticket_ + requests_.size();
  if (closed_) {
    tell_later(std::move(done), Error(Errc::io, "send on " + connection_->where() + ": " + closed_why_));
    return ticket;
  }
  if (commands.empty()) {
    tell_later(std::move(done), std::vector<ReplyPtr>{});
    return ticket;
  }
  // Queued before it is written: a write that fails must fail this request too.
  requests_.push_back(Request{commands.size(), {}, std::move(done), deadlines_.insert(deadline)});
  try {
    if (!connection_->send_now(commands)) arm_write();
  } catch (const Error& error) {
    close(error);
    return ticket;
  }
  arm_read();
  arm_timer();
  return ticket;
}

bool Pipeline::usable() {
  if (closed_) return false;
  if (!requests_.empty()) return true;  // a closed connection fails them, and is noticed then
  if (!connection_->closed_by_peer()) return true;
  close(Error(Errc::io, "read on " + connection_->where() + ": the server closed the idle connection"));
  return false;
}

void Pipeline::forget(Ticket ticket) noexcept {
  if (ticket < first_ticket_ || ticket - first_ticket_ >= requests_.size()) return;  // told already
  requests_[ticket - first_ticket_].done = nullptr;
}

void Pipeline::close(const Error& why) {
  if (closed_) return;
  closed_ = true;
  closed_why_ = why.what();
  descriptor_->cancel();
  timer_->cancel();
  connection_->discard();
  // Told later, on the loop: close() may run inside a caller's submit(), which must return first.
  for (Request& request : requests_) {
    if (request.done) tell_later(std::move(request.done), why);
  }
  first_ticket_ += requests_.size();
  requests_.clear();
  deadlines_.clear();
  if (on_closed_) loop_.post([handler = std::move(on_closed_), why] { handler(why); });
}

void Pipeline::arm_read() {
  if (read_armed_) return;
  read_armed_ = true;
  descriptor_->wait_readable([weak = weak_from_this()] {
    if (const auto self = weak.lock()) self->readable();
  });
}

void Pipeline::arm_write() {
  if (write_armed_) return;
  write_armed_ = true;
  descriptor_->wait_writable([weak = weak_from_this()] {
    if (const auto self = weak.lock()) self->writable();
  });
}

void Pipeline::arm_timer() {
  const Clock::time_point earliest = deadlines_.empty() ? Clock::time_point::max() : *deadlines_.begin();
  if (earliest == timer_at_) return;
  timer_at_ = earliest;
  if (earliest == Clock::time_point::max()) {
    timer_->cancel();
    return;
  }
  timer_->expire_at(earliest, [weak = weak_from_this()] {
    if (const auto self = weak.lock()) self->deadline_passed();
  });
}

void Pipeline::readable() {
  read_armed_ = false;
  if (closed_) return;
  const auto self = shared_from_this();  // a request's `done` may drop the owner's reference
  std::vector<ReplyPtr> replies;
  try {
    replies = connection_->receive_now();
  } catch (const Error& error) {
    close(error);
    return;
  }
  hand_out(std::move(replies));
  if (closed_) return;
  if (!requests_.empty()) arm_read();
  arm_timer();
}

void Pipeline::writable() {
  write_armed_ = false;
  if (closed_) return;
  try {
    if (!connection_->send_pending()) arm_write();
  } catch (const Error& error) {
    close(error);
  }
}

void Pipeline::deadline_passed() {
  timer_at_ = Clock::time_point::max();
  if (closed_) return;
  if (!deadlines_.empty() && *deadlines_.begin() <= Clock::now()) {
    close(Error(Errc::timeout, "read reply on " + connection_->where() +
                                   ": no reply by the request's deadline (the command may have run: outcome unknown)"));
    return;
  }
  arm_timer();
}

void Pipeline::hand_out(std::vector<ReplyPtr> replies) {
  for (ReplyPtr& reply : replies) {
    if (closed_) return;  // a `done` closed it: the rest of the replies are nobody's now
    if (requests_.empty()) {
      close(Error(Errc::protocol, "read reply on " + connection_->where() + ": a reply to no request"));
      return;
    }
    Request& oldest = requests_.front();
    oldest.replies.push_back(std::move(reply));
    if (oldest.replies.size() < oldest.replies_due) continue;
    Request finished = std::move(oldest);
    requests_.pop_front();
    ++first_ticket_;
    deadlines_.erase(finished.deadline);
    if (finished.done) finished.done(std::move(finished.replies));
  }
}

void Pipeline::tell_later(Done done, Outcome outcome) {
  if (!done) return;
  auto shared = std::make_shared<Outcome>(std::move(outcome));  // std::function wants a copyable callable
  loop_.post([done = std::move(done), shared] { done(std::move(*shared)); });
}

}  // namespace lockbridge::detail
