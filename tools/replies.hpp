// Every check of the shape of a reply the CLI reads from Redis in a pipeline (Client::command
// throws on error replies itself; Client::pipeline hands them back in place). An error reply is
// Errc::server_reply with Redis's own text and the command (and key) it answered, never a
// "malformed reply" or a guess at its cause; a reply of the wrong shape is Errc::protocol saying
// what was expected.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "lockbridge/client.hpp"

namespace lockbridge::tools {

// What a reply answered, for messages: "GETRANGE \"lock:1\"", "TIME".
struct Asked {
  std::string_view command;
  std::string_view key = {};
};

// Whether `reply` is an error reply whose text starts with `prefix` ("WRONGTYPE", "NOSCRIPT").
bool is_error_reply(const Reply& reply, std::string_view prefix) noexcept;
// Whether `reply` is Redis's "unknown command" error (a command older servers do not have).
bool is_unknown_command(const Reply& reply) noexcept;

// The reply's content, or the Error above (error reply) or Error{protocol} (another shape).
std::string string_reply(const Reply& reply, Asked asked);  // a bulk or status string
std::int64_t integer_reply(const Reply& reply, Asked asked);
const std::vector<Reply>& array_reply(const Reply& reply, Asked asked);

// INFO's text, one "field:value" line at a time (CRLF or LF); section headers ("# Memory") and
// blank lines, which have no colon, are skipped.
void for_each_info_field(std::string_view info,
                         const std::function<void(std::string_view field, std::string_view value)>& visit);

// TIME's reply as epoch milliseconds: two decimal numbers, seconds and microseconds. Anything else
// is Error{protocol} ("TIME reply ... is not a number").
std::int64_t time_reply_ms(const Reply& reply);

}  // namespace lockbridge::tools
