#include "redisson_peer.hpp"

namespace lockbridge::testing {

std::string redisson_channel(std::string_view key) { return "redisson_lock__channel:{" + std::string(key) + "}"; }

std::vector<std::string> redisson_lock_command(std::string_view key, std::string_view field,
                                               std::string_view lease_ms) {
  return {"EVAL",
          "if (redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then "
          "redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; "
          "return redis.call('pttl', KEYS[1]);",
          "1",
          std::string(key),
          std::string(lease_ms),
          std::string(field)};
}

std::vector<std::string> redisson_unlock_command(std::string_view key, std::string_view field,
                                                 std::string_view publish) {
  return {"EVAL",
          "if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then return nil; end; "
          "local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); "
          "if (counter > 0) then redis.call('pexpire', KEYS[1], ARGV[2]); return 0; "
          "else redis.call('del', KEYS[1]); redis.call(ARGV[4], KEYS[2], ARGV[1]); return 1; end;",
          "2",
          std::string(key),
          redisson_channel(key),
          "0",
          "30000",
          std::string(field),
          std::string(publish)};
}

PeerSubscriber::PeerSubscriber(const std::string& unix_path, std::string_view subscribe_command,
                               const std::string& channel)
    : context_(redisConnectUnix(unix_path.c_str())) {
  subscribe(subscribe_command, channel);
}

PeerSubscriber::PeerSubscriber(int tcp_port, std::string_view subscribe_command, const std::string& channel)
    : context_(redisConnect("127.0.0.1", tcp_port)) {
  subscribe(subscribe_command, channel);
}

PeerSubscriber::~PeerSubscriber() {
  if (context_ != nullptr) redisFree(context_);
}

void PeerSubscriber::subscribe(std::string_view command, const std::string& channel) {
  if (context_ == nullptr || context_->err != 0) return;
  const timeval timeout{10, 0};
  redisSetTimeout(context_, timeout);
  auto* reply = static_cast<redisReply*>(
      redisCommand(context_, "%b %b", command.data(), command.size(), channel.data(), channel.size()));
  // The confirmation: [subscribe|ssubscribe, channel, count].
  subscribed_ = reply != nullptr && reply->type == REDIS_REPLY_ARRAY && reply->elements == 3;
  if (reply != nullptr) freeReplyObject(reply);
}

std::optional<std::string> PeerSubscriber::next_message() {
  if (!subscribed_) return std::nullopt;
  void* reply = nullptr;
  if (redisGetReply(context_, &reply) != REDIS_OK || reply == nullptr) return std::nullopt;
  auto* message = static_cast<redisReply*>(reply);
  std::optional<std::string> payload;
  if (message->type == REDIS_REPLY_ARRAY && message->elements == 3) {
    payload = std::string(message->element[2]->str, message->element[2]->len);
  }
  freeReplyObject(reply);
  return payload;
}

}  // namespace lockbridge::testing
