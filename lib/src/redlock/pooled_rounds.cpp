#include "redlock/pooled_rounds.hpp"

#include <poll.h>

#include <cerrno>
#include <numeric>

#include "lockbridge/error.hpp"
#include "util/poll_timeout.hpp"

namespace lockbridge::detail {

Task<std::vector<QuorumAnswer>> PooledRounds::round(std::span<const std::vector<std::string_view>> commands,
                                                    std::vector<std::size_t> which, Clock::time_point deadline) {
  if (which.empty()) {
    which.resize(masters_.size());
    std::iota(which.begin(), which.end(), std::size_t{0});
  }
  std::vector<QuorumAnswer> answers(masters_.size());
  struct InFlight {
    std::size_t master;
    ConnectionPool::PooledConnection connection;
    std::vector<ReplyPtr> replies;
    bool waiting = true;
  };
  std::vector<InFlight> flying;
  flying.reserve(which.size());
  const auto replies_due = Clock::now() + masters_.front()->options().command_timeout;
  for (const std::size_t master : which) {
    try {
      ConnectionPool::PooledConnection connection = masters_[master]->borrow(deadline);
      connection->send_pipeline(commands);
      flying.push_back(InFlight{master, std::move(connection), {}});
    } catch (const Error& error) {
      answers[master].failure = message_of(error);
    }
  }
  // Wait for every master's replies together: one slow master costs the round its own delay once.
  std::vector<pollfd> fds;
  std::vector<InFlight*> polled;
  for (;;) {
    fds.clear();
    polled.clear();
    for (InFlight& request : flying) {
      if (!request.waiting) continue;
      fds.push_back(pollfd{request.connection->fd(), POLLIN, 0});
      polled.push_back(&request);
    }
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(replies_due - Clock::now());
    if (fds.empty() || left <= std::chrono::milliseconds::zero()) break;
    const int ready = poll(fds.data(), fds.size(), poll_timeout(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      InFlight& request = *polled[i];
      try {
        for (ReplyPtr& reply : request.connection->read_available()) request.replies.push_back(std::move(reply));
        if (request.replies.size() < commands.size()) continue;
        answers[request.master].replies = std::move(request.replies);
      } catch (const Error& error) {
        answers[request.master].failure = message_of(error);
      }
      request.waiting = false;
    }
  }
  for (InFlight& request : flying) {
    if (!request.waiting) continue;
    request.connection->discard();  // its reply can never be matched up again
    answers[request.master].failure =
        masters_[request.master]->url().redacted() + ": no reply within the command timeout (the command may have run)";
  }
  co_return answers;
}

}  // namespace lockbridge::detail
