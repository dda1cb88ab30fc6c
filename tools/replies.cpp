#include "replies.hpp"

#include <optional>

#include "cli_common.hpp"
#include "key_text.hpp"
#include "lockbridge/error.hpp"

namespace lockbridge::tools {

namespace {

std::string describe(Asked asked) {
  std::string text(asked.command);
  if (!asked.key.empty()) text += " " + quoted_key(asked.key);
  return text;
}

std::string_view kind_name(Reply::Kind kind) noexcept {
  switch (kind) {
    case Reply::Kind::nil:
      return "nil";
    case Reply::Kind::string:
      return "a string";
    case Reply::Kind::status:
      return "a status";
    case Reply::Kind::integer:
      return "an integer";
    case Reply::Kind::array:
      return "an array";
    case Reply::Kind::error:
      return "an error";
  }
  return "an unknown reply";
}

// Throws Error{server_reply} when `reply` is an error reply.
void expect_no_error(const Reply& reply, Asked asked) {
  if (reply.kind == Reply::Kind::error) throw Error(Errc::server_reply, describe(asked) + ": " + reply.str);
}

[[noreturn]] void wrong_shape(const Reply& reply, Asked asked, std::string_view expected) {
  expect_no_error(reply, asked);
  throw Error(Errc::protocol,
              describe(asked) + ": expected " + std::string(expected) + ", got " + std::string(kind_name(reply.kind)));
}

}  // namespace

bool is_error_reply(const Reply& reply, std::string_view prefix) noexcept {
  return reply.kind == Reply::Kind::error && reply.str.starts_with(prefix);
}

bool is_unknown_command(const Reply& reply) noexcept { return is_error_reply(reply, "ERR unknown command"); }

std::string string_reply(const Reply& reply, Asked asked) {
  if (reply.kind != Reply::Kind::string && reply.kind != Reply::Kind::status) wrong_shape(reply, asked, "a string");
  return reply.str;
}

std::int64_t integer_reply(const Reply& reply, Asked asked) {
  if (reply.kind != Reply::Kind::integer) wrong_shape(reply, asked, "an integer");
  return reply.integer;
}

const std::vector<Reply>& array_reply(const Reply& reply, Asked asked) {
  if (reply.kind != Reply::Kind::array) wrong_shape(reply, asked, "an array");
  return reply.elements;
}

std::int64_t time_reply_ms(const Reply& reply) {
  const Asked asked{"TIME"};
  const std::vector<Reply>& parts = array_reply(reply, asked);
  if (parts.size() != 2)
    throw Error(Errc::protocol, "TIME reply has " + std::to_string(parts.size()) + " elements, not 2");
  const std::string seconds_text = string_reply(parts[0], asked);
  const std::string micros_text = string_reply(parts[1], asked);
  const auto seconds = whole_number(seconds_text);
  const auto micros = whole_number(micros_text);
  // Bounded so that the milliseconds, and the sums audit makes with them, fit in 64 bits.
  constexpr std::int64_t kMaxSeconds = std::int64_t{1} << 40;  // some 35000 years
  if (!seconds || !micros || *seconds < 0 || *seconds > kMaxSeconds || *micros < 0 || *micros > 999'999) {
    throw Error(Errc::protocol,
                "TIME reply '" + seconds_text + "' '" + micros_text + "' is not a number of seconds and microseconds");
  }
  return *seconds * 1000 + *micros / 1000;
}

void for_each_info_field(std::string_view info,
                         const std::function<void(std::string_view field, std::string_view value)>& visit) {
  while (!info.empty()) {
    const std::size_t eol = info.find('\n');
    std::string_view line = info.substr(0, eol);
    info = eol == std::string_view::npos ? std::string_view() : info.substr(eol + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::size_t colon = line.find(':');
    if (colon != std::string_view::npos) visit(line.substr(0, colon), line.substr(colon + 1));
  }
}

}  // namespace lockbridge::tools
