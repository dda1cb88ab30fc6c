#include "lockbridge/client.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>

#include "lockbridge/error.hpp"
#include "lockbridge/identity.hpp"
#include "redis/client_state.hpp"
#include "redis/eval_fallback.hpp"
#include "util/option_limits.hpp"

namespace lockbridge {

void ClientOptions::validate() const {
  using std::chrono::milliseconds;
  detail::require_within("connect_timeout", connect_timeout, milliseconds(1));
  detail::require_within("command_timeout", command_timeout, milliseconds(1));
  // Each is a socket, and the pool reserves room for all of them up front.
  if (pool_size == 0 || pool_size > kMaxPoolSize) {
    throw Error(Errc::bad_option, "pool_size must be between 1 and " + std::to_string(kMaxPoolSize) + ", got " +
                                      std::to_string(pool_size));
  }
  detail::require_within("reconnect_backoff", reconnect_backoff, milliseconds::zero());
  tls.validate();
}

void TlsOptions::validate() const {
  if (cert_file.empty() != key_file.empty()) {
    throw Error(Errc::bad_option,
                "a TLS client certificate needs its key and a key its certificate (cert_file and "
                "key_file, --cert and --key): only " +
                    std::string(cert_file.empty() ? "the key" : "the certificate") + " is given");
  }
}

std::string TlsOptions::settings_given() const {
  std::string given;
  const auto add = [&given](bool set, const char* name) {
    if (set) given += (given.empty() ? "" : ", ") + std::string(name);
  };
  add(!ca_file.empty(), "--cacert");
  add(!ca_dir.empty(), "--cacertdir");
  add(!cert_file.empty(), "--cert");
  add(!key_file.empty(), "--key");
  add(!server_name.empty(), "--sni");
  add(!verify, "--insecure");
  return given;
}

void TlsOptions::validate(const RedisUrl& url) const {
  validate();
  const bool tls = url.tls || enabled;
  if (url.transport == RedisUrl::Transport::unix_socket && tls) {
    throw Error(Errc::bad_option, "TLS over a unix socket: Redis serves TLS on TCP ports only (tls-port)");
  }
  if (const std::string given = settings_given(); !tls && !given.empty()) {
    throw Error(Errc::bad_option, "TLS settings (" + given + ") for a connection without TLS (" + url.redacted() +
                                      "): use a rediss:// URL, or --tls (TlsOptions::enabled); they are never "
                                      "ignored, which would send the password and the locks in plain text");
  }
}

namespace detail {
namespace {
RedisUrl primary_server(const RedisUrl& url) {
  switch (url.topology) {
    case RedisUrl::Topology::single:
    case RedisUrl::Topology::sentinel:
      return url;
    case RedisUrl::Topology::redlock:
    case RedisUrl::Topology::cluster:
      break;
  }
  return url.server(url.nodes.front());
}

std::shared_ptr<Endpoint> make_endpoint(RedisUrl server, const ClientOptions& options,
                                        std::atomic<std::uint64_t>& round_trips) {
  return std::make_shared<Endpoint>(std::move(server), options, round_trips);
}
}  // namespace

ClientState::ClientState(RedisUrl given, const ClientOptions& options)
    : url(std::move(given)),
      observer(options.observer),
      waiter_tag(random_token().substr(0, 12)),
      endpoint(make_endpoint(primary_server(url), options, round_trips)),
      pool(endpoint),
      notifier(endpoint),
      keeper(endpoint, scripts, observer ? &events : nullptr, observer) {
  if (url.topology == RedisUrl::Topology::cluster) {
    cluster = std::make_unique<ClusterRouter>(url, options, round_trips);
    keeper.route_through(cluster.get());
    return;
  }
  if (url.topology != RedisUrl::Topology::redlock) return;
  masters.reserve(url.nodes.size());
  for (const RedisUrl::Node& node : url.nodes) {
    masters.push_back(std::make_unique<ConnectionPool>(make_endpoint(url.server(node), options, round_trips)));
  }
}
}  // namespace detail

Client::Client(std::string_view url, ClientOptions options) : Client(parse_redis_url(url), options) {}

Client::Client(RedisUrl url, ClientOptions options) {
  options.validate();
  options.tls.validate(url);
  state_ = std::make_shared<detail::ClientState>(std::move(url), options);
}

std::vector<Client> Client::masters() const {
  std::vector<Client> out;
  if (state_->cluster) {
    for (const detail::NodeAddress& master : state_->cluster->masters()) {
      out.emplace_back(state_->cluster->server(master), options());
    }
  } else if (state_->redlock()) {
    for (const RedisUrl::Node& node : state_->url.nodes) out.emplace_back(state_->url.server(node), options());
  } else {
    out.push_back(*this);
  }
  return out;
}

Client::~Client() = default;

const RedisUrl& Client::url() const noexcept { return state_->url; }
const ClientOptions& Client::options() const noexcept { return state_->pool.options(); }

ClientStats Client::stats() const noexcept {
  return ClientStats{state_->round_trips.load(std::memory_order_relaxed), state_->keeper.renewals(),
                     state_->keeper.renewal_round_trips(), state_->events.dropped()};
}

namespace {
bool named(std::string_view word, std::string_view name) {
  return word.size() == name.size() && std::equal(word.begin(), word.end(), name.begin(), [](char a, char b) {
           return std::toupper(static_cast<unsigned char>(a)) == b;
         });
}

// The key Redis Cluster routes a command by: the argument after the command's name (GET k, SET k v,
// DEL k ...), or the first key of EVAL/EVALSHA/FCALL body numkeys k .... Commands about the node
// rather than a key (INFO, SCRIPT LOAD, DBSIZE ...) and those without arguments go to the master
// of slot 0.
std::string_view routing_key(std::span<const std::string_view> args) {
  const bool script = named(args[0], "EVAL") || named(args[0], "EVALSHA") || named(args[0], "FCALL");
  if (script) return args.size() > 3 && args[2] != "0" ? args[3] : "";
  static constexpr std::array<std::string_view, 14> kNodeCommands{"INFO",    "SCRIPT", "CONFIG", "CLIENT", "CLUSTER",
                                                                  "COMMAND", "DBSIZE", "TIME",   "PING",   "ECHO",
                                                                  "SCAN",    "WAIT",   "MEMORY", "FLUSHDB"};
  if (std::any_of(kNodeCommands.begin(), kNodeCommands.end(),
                  [&](std::string_view name) { return named(args[0], name); })) {
    return "";
  }
  return args.size() > 1 ? args[1] : "";
}
}  // namespace

Reply Client::command(std::span<const std::string> args) const {
  std::vector<std::string_view> views(args.begin(), args.end());
  return command_views(views);
}

Reply Client::command(std::initializer_list<std::string_view> args) const {
  return command_views(std::span<const std::string_view>(args.begin(), args.size()));
}

Reply Client::command_views(std::span<const std::string_view> args) const {
  if (args.empty()) throw Error(Errc::bad_option, "empty command");
  Reply out;
  state_->with_connection(routing_key(args), [&](detail::Connection& connection) {
    const detail::ReplyPtr reply = connection.run(args);
    detail::throw_if_error(*reply, std::string(args.front()));
    out = detail::to_public_reply(*reply);
  });
  return out;
}

std::vector<Reply> Client::pipeline(std::span<const std::vector<std::string>> commands) const {
  std::vector<std::vector<std::string_view>> views;
  views.reserve(commands.size());
  for (const auto& command : commands) {
    if (command.empty()) throw Error(Errc::bad_option, "empty command in a pipeline");
    views.emplace_back(command.begin(), command.end());
  }
  std::vector<Reply> out(views.size());
  // Redis Cluster: one pipeline per master, each with the commands whose keys it serves.
  std::map<detail::NodeAddress, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < views.size(); ++i) {
    groups[state_->cluster ? state_->cluster->master_of(detail::key_slot(routing_key(views[i])))
                           : detail::NodeAddress{}]
        .push_back(i);
  }
  for (const auto& entry : groups) {
    const std::vector<std::size_t>& indices = entry.second;  // a lambda below uses it (no binding)
    std::vector<std::vector<std::string_view>> group;
    group.reserve(indices.size());
    for (const std::size_t i : indices) group.push_back(views[i]);
    state_->with_connection(routing_key(group.front()), [&](detail::Connection& connection) {
      const std::vector<detail::ReplyPtr> replies = connection.pipeline(group);
      // Every command redirected (the slots moved): none ran, so the group may go to the right
      // node. With only some redirected, the others ran, and the replies say which.
      if (detail::all_redirected(replies)) {
        throw Error(Errc::server_reply, "pipeline: " + std::string(detail::as_view(*replies.front())));
      }
      for (std::size_t j = 0; j < replies.size(); ++j) out[indices[j]] = detail::to_public_reply(*replies[j]);
    });
  }
  return out;
}

std::vector<Reply> Client::eval(std::string_view script, std::span<const EvalCall> calls) const {
  const std::string sha = script_sha1(script);
  // Run in place: each batch is one blocking pipeline.
  const auto send = [&](detail::ScriptForm form,
                        const std::vector<std::size_t>& which) -> detail::Task<std::vector<Reply>> {
    std::vector<std::vector<std::string>> commands;
    commands.reserve(which.size());
    for (const std::size_t i : which) {
      const EvalCall& call = calls[i];
      std::vector<std::string> command{form == detail::ScriptForm::sha ? "EVALSHA" : "EVAL",
                                       form == detail::ScriptForm::sha ? sha : std::string(script),
                                       std::to_string(call.keys.size())};
      command.insert(command.end(), call.keys.begin(), call.keys.end());
      command.insert(command.end(), call.args.begin(), call.args.end());
      commands.push_back(std::move(command));
    }
    co_return pipeline(commands);
  };
  return detail::run_with_eval_fallback<Reply>(
             calls.size(), send,
             [](const Reply& reply) { return reply.kind == Reply::Kind::error && reply.str.starts_with("NOSCRIPT"); })
      .run_now();
}

void Client::ping() const {
  const Reply reply = command({"PING"});
  if (reply.kind != Reply::Kind::status || reply.str != "PONG") {
    // Redis answers +PONG: anything else is another kind of server (or a proxy in front of one).
    static constexpr std::string_view kKinds[] = {"nil", "a string", "a status", "an integer", "an array", "an error"};
    std::string answer(kKinds[static_cast<std::size_t>(reply.kind)]);
    if (!reply.str.empty()) answer += " '" + reply.str.substr(0, 60) + (reply.str.size() > 60 ? "...'" : "'");
    if (reply.kind == Reply::Kind::integer) answer += " " + std::to_string(reply.integer);
    throw Error(Errc::protocol,
                "PING to " + url().redacted() + " answered " + answer + ", not PONG: is it a Redis server?");
  }
}

}  // namespace lockbridge
