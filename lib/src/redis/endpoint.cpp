#include "redis/endpoint.hpp"

#include <charconv>

#include "lockbridge/error.hpp"

namespace lockbridge::detail {

namespace {
bool is_sentinel(const RedisUrl& url) { return url.topology == RedisUrl::Topology::sentinel; }

std::string address(const RedisUrl::Node& node) { return node.host + ":" + std::to_string(node.port); }

// SENTINEL get-master-addr-by-name answers {ip, port}, or nil for a name it does not monitor.
std::optional<RedisUrl::Node> master_address(const redisReply& reply) {
  if (reply.type != REDIS_REPLY_ARRAY || reply.elements != 2 || reply.element[0]->type != REDIS_REPLY_STRING ||
      reply.element[1]->type != REDIS_REPLY_STRING) {
    return std::nullopt;
  }
  const std::string_view port_text = as_view(*reply.element[1]);
  int port = 0;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port < 1 || port > 65535) return std::nullopt;
  return RedisUrl::Node{std::string(as_view(*reply.element[0])), port};
}
}  // namespace

Endpoint::Endpoint(RedisUrl url, ClientOptions options, std::atomic<std::uint64_t>& round_trips)
    : url_(std::move(url)), options_(options), round_trips_(round_trips) {
  if (!is_sentinel(url_)) {
    master_ = url_;
    stale_ = false;
  }
}

std::unique_ptr<Connection> Endpoint::connect() {
  if (!is_sentinel(url_)) {
    auto connection = std::make_unique<Connection>(url_, options_, round_trips_);
    connection->set_generation(generation_.load(std::memory_order_acquire));
    return connection;
  }
  refresh_if_stale();
  RedisUrl master;
  std::uint64_t generation = 0;
  {
    std::lock_guard lock(mutex_);
    master = master_;
    generation = generation_.load(std::memory_order_acquire);
  }
  try {
    auto connection = std::make_unique<Connection>(master, options_, round_trips_);
    // During a failover the sentinels may still name the old master, which may have come back as a
    // replica: writing a lock there would be lost. Redis's Sentinel client guidelines ask for this.
    const ReplyPtr role = connection->run({"ROLE"});
    const std::string context = "ROLE of " + master.redacted() + " (master '" + url_.master_name + "')";
    if (role->type != REDIS_REPLY_ARRAY || role->elements < 1 || role->element[0]->type != REDIS_REPLY_STRING) {
      unexpected_reply(*role, "an array naming the role", context);
    }
    if (as_view(*role->element[0]) != "master") {
      throw Error(Errc::io, context + ": the sentinels name it master but it says '" +
                                std::string(as_view(*role->element[0])) + "' (a failover is in progress)");
    }
    connection->set_generation(generation);
    return connection;
  } catch (const Error&) {
    std::lock_guard lock(mutex_);
    if (generation == generation_.load(std::memory_order_acquire)) stale_ = true;
    throw;
  }
}

void Endpoint::connection_broke(const Connection& connection) noexcept {
  if (!is_sentinel(url_)) return;
  std::lock_guard lock(mutex_);
  if (connection.generation() == generation_.load(std::memory_order_acquire)) stale_ = true;
}

void Endpoint::refresh_if_stale(std::chrono::steady_clock::time_point deadline) {
  if (!stale_.load(std::memory_order_acquire)) return;
  std::lock_guard lock(mutex_);
  if (!stale_.load(std::memory_order_acquire)) return;  // another thread asked while we waited
  const RedisUrl master = resolve_master(deadline);
  if (master.host != master_.host || master.port != master_.port) {
    master_ = master;
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  stale_ = false;
}

RedisUrl Endpoint::resolve_master(std::chrono::steady_clock::time_point deadline) {
  std::string failures;
  const std::size_t count = url_.nodes.size();
  for (std::size_t i = 0; i < count; ++i) {
    if (i > 0 && std::chrono::steady_clock::now() >= deadline) {
      failures += "; the caller's deadline passed before the other sentinels were asked";
      break;
    }
    const std::size_t index = (next_sentinel_ + i) % count;
    const RedisUrl::Node& sentinel = url_.nodes[index];
    RedisUrl sentinel_url;  // sentinels are asked without the data nodes' credentials and database
    sentinel_url.host = sentinel.host;
    sentinel_url.port = sentinel.port;
    sentinel_url.tls = url_.tls;  // rediss-sentinel://: the sentinels over TLS as well as the data nodes
    try {
      Connection connection(sentinel_url, options_, round_trips_);
      const ReplyPtr reply = connection.run({"SENTINEL", "get-master-addr-by-name", url_.master_name});
      if (const auto master = master_address(*reply)) {
        next_sentinel_ = index;
        return url_.server(*master);
      }
      failures += "; sentinel " + address(sentinel) +
                  (reply->type == REDIS_REPLY_NIL     ? " does not monitor it"
                   : reply->type == REDIS_REPLY_ERROR ? ": " + std::string(as_view(*reply))
                                                      : " answered something other than {ip, port}");
    } catch (const Error& error) {
      failures += "; " + message_of(error);
    }
  }
  throw Error(Errc::io,
              "no sentinel of " + url_.redacted() + " named the master '" + url_.master_name + "'" + failures);
}

}  // namespace lockbridge::detail
