#include "lockbridge/client.hpp"

#include "client_state.hpp"
#include "lockbridge/error.hpp"

namespace lockbridge {

void ClientOptions::validate() const {
  using std::chrono::milliseconds;
  if (connect_timeout <= milliseconds::zero()) throw Error(Errc::bad_option, "connect_timeout must be positive");
  if (command_timeout <= milliseconds::zero()) throw Error(Errc::bad_option, "command_timeout must be positive");
  if (pool_size == 0) throw Error(Errc::bad_option, "pool_size must be at least 1");
  if (reconnect_backoff < milliseconds::zero()) throw Error(Errc::bad_option, "reconnect_backoff must not be negative");
}

Client::Client(std::string_view url, ClientOptions options) {
  options.validate();
  state_ = std::make_shared<detail::ClientState>(parse_redis_url(url), options);
}

Client::~Client() = default;

const RedisUrl& Client::url() const noexcept { return state_->pool.url(); }
const ClientOptions& Client::options() const noexcept { return state_->pool.options(); }

ClientStats Client::stats() const noexcept {
  return ClientStats{state_->round_trips.load(std::memory_order_relaxed), state_->keeper.renewals(),
                     state_->keeper.renewal_round_trips()};
}

Reply Client::command(std::span<const std::string> args) const {
  std::vector<std::string_view> views(args.begin(), args.end());
  return command_views(views);
}

Reply Client::command(std::initializer_list<std::string_view> args) const {
  return command_views(std::span<const std::string_view>(args.begin(), args.size()));
}

Reply Client::command_views(std::span<const std::string_view> args) const {
  if (args.empty()) throw Error(Errc::bad_option, "empty command");
  auto connection = state_->pool.borrow();
  const detail::ReplyPtr reply = connection->run(args);
  detail::throw_if_error(*reply, std::string(args.front()));
  return detail::to_public_reply(*reply);
}

std::vector<Reply> Client::pipeline(std::span<const std::vector<std::string>> commands) const {
  std::vector<std::vector<std::string_view>> views;
  views.reserve(commands.size());
  for (const auto& command : commands) {
    if (command.empty()) throw Error(Errc::bad_option, "empty command in a pipeline");
    views.emplace_back(command.begin(), command.end());
  }
  if (views.empty()) return {};
  auto connection = state_->pool.borrow();
  const std::vector<detail::ReplyPtr> replies = connection->pipeline(views);
  std::vector<Reply> out;
  out.reserve(replies.size());
  for (const detail::ReplyPtr& reply : replies) out.push_back(detail::to_public_reply(*reply));
  return out;
}

void Client::ping() const {
  const Reply reply = command({"PING"});
  if (reply.kind != Reply::Kind::status || reply.str != "PONG") {
    throw Error(Errc::protocol, "PING to " + url().redacted() + ": unexpected reply");
  }
}

}  // namespace lockbridge
