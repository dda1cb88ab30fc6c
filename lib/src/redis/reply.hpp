// Everything about a reply, in one place: owning it, reading its shape, and turning an error
// reply into the lockbridge::Error it means (a redirect, a wrong type, a script's error naming its
// key). Connections, strategies, targets and the cluster router all read replies through here.
#pragma once

#include <hiredis/hiredis.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "lockbridge/client.hpp"
#include "lockbridge/error.hpp"

namespace lockbridge::detail {

struct ReplyDeleter {
  void operator()(redisReply* reply) const noexcept { freeReplyObject(reply); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

// What an error about a reply names: "acquire 'orders:42'", or any text. An operation and a key are
// kept as views and printed (printable_key) only when an error is thrown: a lock cycle's every
// reply is checked, and building the text each time cost more than the rest of the checks.
// Views: a ReplyContext lives no longer than the strings it was made from (a parameter, or a local
// made from the operation and key).
class ReplyContext {
 public:
  // NOLINTBEGIN(google-explicit-constructor): ready-made text converts like a string would
  ReplyContext(std::string_view text) noexcept : operation_(text) {}
  ReplyContext(const std::string& text) noexcept : operation_(text) {}
  ReplyContext(const char* text) noexcept : operation_(text) {}
  // NOLINTEND(google-explicit-constructor)
  ReplyContext(std::string_view operation, std::string_view key) noexcept
      : operation_(operation), key_(key), names_key_(true) {}

  std::string text() const;

 private:
  std::string_view operation_;
  std::string_view key_;
  bool names_key_ = false;
};

// Throws when `reply` is an error reply: WRONGTYPE maps to Errc::wrong_type, anything else to
// Errc::server_reply. `context` names the operation, e.g. "acquire 'orders:42'".
void throw_if_error(const redisReply& reply, const ReplyContext& context);

// throw_if_error for the reply of one of our scripts (scripts.hpp). A script names the key an error
// is about as "KEYS[n]", replaced here by that key of `keys` (quoted, escaped): a key's bytes never
// travel inside a Redis error line. Besides WRONGTYPE, a counter Redis cannot increment (not an
// integer, or at its maximum) maps to Errc::bad_value.
void throw_if_script_error(const redisReply& reply, const ReplyContext& context, std::span<const std::string> keys);

// Shape checks that throw Errc::protocol naming what was expected.
std::int64_t expect_integer(const redisReply& reply, const ReplyContext& context);
[[noreturn]] void unexpected_reply(const redisReply& reply, std::string_view expected, const ReplyContext& context);

inline std::string_view as_view(const redisReply& reply) noexcept { return {reply.str, reply.len}; }

// A Redis Cluster MOVED or ASK error reply: the command did not run.
inline bool is_redirect(const redisReply& reply) noexcept {
  if (reply.type != REDIS_REPLY_ERROR) return false;
  const std::string_view text = as_view(reply);
  return text.starts_with("MOVED ") || text.starts_with("ASK ");
}

// A reply that says the command did not run and the cluster router runs it again: a redirect
// (MOVED, ASK: followed) or TRYAGAIN (keys split by a migration: waited out).
inline bool is_rerouted(const redisReply& reply) noexcept {
  return is_redirect(reply) || (reply.type == REDIS_REPLY_ERROR && as_view(reply).starts_with("TRYAGAIN"));
}

// For operations run through Redis Cluster routing that return error replies instead of throwing:
// a rerouted reply is thrown (Errc::server_reply), so that the router follows the redirect or
// waits the migration out.
void throw_if_rerouted(const redisReply& reply);
// Whether every reply of a pipeline was a redirect: then none of its commands ran, and the whole
// pipeline may be sent where the first redirect points.
inline bool all_redirected(std::span<const ReplyPtr> replies) noexcept {
  return std::all_of(replies.begin(), replies.end(), [](const ReplyPtr& reply) { return is_redirect(*reply); });
}

// An Error's message without the code description that what() ends with, for quoting it inside
// another Error's message (which adds its own).
std::string message_of(const Error& error);

// A key for messages: quoted, with bytes that are not printable ASCII escaped, truncated if long.
std::string printable_key(std::string_view key);

// Copies a hiredis reply into the public Reply type.
Reply to_public_reply(const redisReply& reply);

// Reads a script reply {flag, ...}: the array, checked to have at least `min_size` elements.
const redisReply& expect_array(const redisReply& reply, std::size_t min_size, const ReplyContext& context);

// A string reply, or nullopt for nil; an error reply is thrown (throw_if_error).
std::optional<std::string> string_or_nil(const redisReply& reply, const ReplyContext& context);

}  // namespace lockbridge::detail
