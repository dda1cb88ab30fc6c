#include "redis/reply.hpp"

#include <charconv>

namespace lockbridge::detail {

std::string message_of(const Error& error) {
  std::string message = error.what();
  const std::string suffix = ": " + error.code().message();
  if (message.ends_with(suffix)) message.resize(message.size() - suffix.size());
  return message;
}

void throw_if_rerouted(const redisReply& reply) {
  if (is_rerouted(reply)) throw Error(Errc::server_reply, std::string(as_view(reply)));
}

namespace {
// The code of an error reply: wrong_type for WRONGTYPE, else server_reply (Redis's own words).
Errc errc_of(std::string_view text) noexcept {
  return text.starts_with("WRONGTYPE") ? Errc::wrong_type : Errc::server_reply;
}
}  // namespace

std::string ReplyContext::text() const {
  if (!names_key_) return std::string(operation_);
  return std::string(operation_) + " " + printable_key(key_);
}

void throw_if_error(const redisReply& reply, const ReplyContext& context) {
  if (reply.type != REDIS_REPLY_ERROR) return;
  const std::string_view text = as_view(reply);
  throw Error(errc_of(text), context.text() + ": " + std::string(text));
}

void throw_if_script_error(const redisReply& reply, const ReplyContext& context, std::span<const std::string> keys) {
  if (reply.type != REDIS_REPLY_ERROR) return;
  const std::string_view text = as_view(reply);
  std::string message;
  std::size_t from = 0;
  for (std::size_t at = text.find("KEYS["); at != std::string_view::npos; at = text.find("KEYS[", from)) {
    message.append(text.substr(from, at - from));
    const std::size_t digits = at + 5;
    std::size_t index = 0;
    const auto [end, ec] = std::from_chars(text.data() + digits, text.data() + text.size(), index);
    const std::size_t close = static_cast<std::size_t>(end - text.data());
    if (ec == std::errc() && close < text.size() && text[close] == ']' && index >= 1 && index <= keys.size()) {
      message.append(printable_key(keys[index - 1]));
      from = close + 1;
    } else {
      message.append("KEYS[");
      from = digits;
    }
  }
  message.append(text.substr(from));
  // A script's arithmetic on a value that is no number (a fence counter) is the value's fault.
  const bool bad_number =
      text.find("is not an integer") != std::string_view::npos || text.find("would overflow") != std::string_view::npos;
  Errc code = errc_of(text);
  if (code == Errc::server_reply && bad_number) code = Errc::bad_value;
  throw Error(code, context.text() + ": " + message);
}

void unexpected_reply(const redisReply& reply, std::string_view expected, const ReplyContext& context) {
  throw_if_error(reply, context);
  throw Error(Errc::protocol, context.text() + ": expected " + std::string(expected) + ", got reply type " +
                                  std::to_string(reply.type));
}

std::int64_t expect_integer(const redisReply& reply, const ReplyContext& context) {
  if (reply.type != REDIS_REPLY_INTEGER) unexpected_reply(reply, "an integer", context);
  return reply.integer;
}

std::string printable_key(std::string_view key) {
  constexpr std::size_t kMax = 80;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "'";
  for (std::size_t i = 0; i < key.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(key[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'') {
      out.push_back(static_cast<char>(c));
    } else {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
    }
  }
  if (key.size() > kMax) out += "...";
  return out + "'";
}

Reply to_public_reply(const redisReply& reply) {
  Reply out;
  switch (reply.type) {
    case REDIS_REPLY_STRING:
      out.kind = Reply::Kind::string;
      out.str.assign(reply.str, reply.len);
      break;
    case REDIS_REPLY_STATUS:
      out.kind = Reply::Kind::status;
      out.str.assign(reply.str, reply.len);
      break;
    case REDIS_REPLY_ERROR:
      out.kind = Reply::Kind::error;
      out.str.assign(reply.str, reply.len);
      break;
    case REDIS_REPLY_INTEGER:
      out.kind = Reply::Kind::integer;
      out.integer = reply.integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.kind = Reply::Kind::array;
      out.elements.reserve(reply.elements);
      for (std::size_t i = 0; i < reply.elements; ++i) out.elements.push_back(to_public_reply(*reply.element[i]));
      break;
    default:
      out.kind = Reply::Kind::nil;
  }
  return out;
}

const redisReply& expect_array(const redisReply& reply, std::size_t min_size, const ReplyContext& context) {
  if (reply.type != REDIS_REPLY_ARRAY || reply.elements < min_size) {
    unexpected_reply(reply, "an array of " + std::to_string(min_size), context);
  }
  return reply;
}

std::optional<std::string> string_or_nil(const redisReply& reply, const ReplyContext& context) {
  throw_if_error(reply, context);
  if (reply.type == REDIS_REPLY_NIL) return std::nullopt;
  if (reply.type != REDIS_REPLY_STRING) unexpected_reply(reply, "a string or nil", context);
  return std::string(as_view(reply));
}

}  // namespace lockbridge::detail
