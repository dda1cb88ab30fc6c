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

namespace detail {
namespace {
RedisUrl primary_server(const RedisUrl& url) {
  switch (url.topology) {
    case RedisUrl::Topology::single:
    case RedisUrl::Topology::sentinel:
      return url;
    case RedisUrl::Topology::redlock:
      return url.server(url.nodes.front());
    case RedisUrl::Topology::cluster:
      break;
  }
  throw Error(Errc::bad_option, "redis-cluster:// is not supported yet: use a redis:// URL of one master, or "
                                "redis-sentinel:// / redlock://");
}

std::shared_ptr<Endpoint> make_endpoint(RedisUrl server, const ClientOptions& options, std::atomic<std::uint64_t>& round_trips) {
  return std::make_shared<Endpoint>(std::move(server), options, round_trips);
}
}  // namespace

ClientState::ClientState(RedisUrl given, const ClientOptions& options)
    : url(std::move(given)),
      endpoint(make_endpoint(primary_server(url), options, round_trips)),
      pool(endpoint),
      notifier(endpoint),
      keeper(endpoint, scripts) {
  if (url.topology != RedisUrl::Topology::redlock) return;
  masters.reserve(url.nodes.size());
  for (const RedisUrl::Node& node : url.nodes) {
    masters.push_back(std::make_unique<ConnectionPool>(make_endpoint(url.server(node), options, round_trips)));
  }
}
}  // namespace detail

Client::Client(std::string_view url, ClientOptions options) {
  options.validate();
  state_ = std::make_shared<detail::ClientState>(parse_redis_url(url), options);
}

Client::~Client() = default;

const RedisUrl& Client::url() const noexcept { return state_->url; }
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
