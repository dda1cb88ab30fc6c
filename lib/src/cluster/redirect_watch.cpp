#include "cluster/redirect_watch.hpp"

namespace lockbridge::detail {

void RedirectNote::saw_error(std::string_view text) {
  if (!redirect) redirect = parse_redirect(text);  // nullopt for any other error
  if (text.starts_with("TRYAGAIN")) try_again = true;
}

RedirectWatch::RedirectWatch(Connection& connection, bool asking, RedirectNote& note) noexcept
    : connection_(connection), asking_(asking), note_(note) {
  connection_.set_hook(this);
}

RedirectWatch::~RedirectWatch() { connection_.set_hook(nullptr); }

void RedirectLink::note(const std::vector<ReplyPtr>& replies) {
  for (const ReplyPtr& reply : replies) {
    if (reply->type == REDIS_REPLY_ERROR) note_.saw_error(as_view(*reply));
  }
}

Task<ReplyPtr> RedirectLink::run(Args args) {
  if (!asking_) {
    ReplyPtr reply = co_await inner_.run(args);
    if (reply->type == REDIS_REPLY_ERROR) note_.saw_error(as_view(*reply));
    co_return reply;
  }
  const std::span<const std::string_view> command(args.begin(), args.size());
  std::vector<std::vector<std::string_view>> commands(2);
  commands[0] = {"ASKING"};
  commands[1].assign(command.begin(), command.end());
  std::vector<ReplyPtr> replies = co_await inner_.pipeline(commands);
  note(replies);
  co_return std::move(replies.back());
}

Task<std::vector<ReplyPtr>> RedirectLink::pipeline(std::span<const std::vector<std::string_view>> commands) {
  if (!asking_) {
    std::vector<ReplyPtr> replies = co_await inner_.pipeline(commands);
    note(replies);
    co_return replies;
  }
  // ASKING holds for the next command only: one before each.
  std::vector<std::vector<std::string_view>> asked;
  asked.reserve(commands.size() * 2);
  for (const auto& command : commands) {
    asked.push_back({"ASKING"});
    asked.push_back(command);
  }
  std::vector<ReplyPtr> replies = co_await inner_.pipeline(asked);
  note(replies);
  std::vector<ReplyPtr> answers;
  answers.reserve(commands.size());
  for (std::size_t i = 1; i < replies.size(); i += 2) answers.push_back(std::move(replies[i]));
  co_return answers;
}

Task<std::unique_ptr<Link>> RedirectLink::exclusive_link() {
  std::unique_ptr<Link> inner = co_await inner_.exclusive_link();
  co_return std::make_unique<RedirectLink>(std::move(inner), asking_, note_);
}

Task<ReplyPtr> RedirectLink::run_held(Args args, std::chrono::milliseconds server_wait) {
  // WAIT names no key: a redirect cannot concern it, and it needs no ASKING.
  ReplyPtr reply = co_await inner_.run_held(args, server_wait);
  if (reply->type == REDIS_REPLY_ERROR) note_.saw_error(as_view(*reply));
  co_return reply;
}

}  // namespace lockbridge::detail
