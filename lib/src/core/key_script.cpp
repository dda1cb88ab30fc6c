#include "core/key_script.hpp"

#include <span>

#include "core/routes.hpp"
#include "strategies/strategy.hpp"

namespace lockbridge::detail {

ReplyPtr run_on_key(ClientState& state, const ScriptCall& call, std::string_view operation) {
  const std::string& key = call.keys.front();
  ReplyPtr reply;
  BlockingRoutes routes(state);
  const Routes::Operation run = [&](Link& link) -> Task<void> {
    auto replies = co_await run_scripts(link, state.scripts, std::span(&call, 1));
    reply = std::move(replies.front());
  };
  try {
    routes.on_link(key, run, std::chrono::steady_clock::time_point::max()).run_now();
  } catch (const Error& error) {
    throw naming_key(error, operation, key);
  }
  throw_if_script_error(*reply, ReplyContext(operation, key), call.keys);
  return reply;
}

void require_java_int(std::string_view what, std::int64_t value, std::int64_t least) {
  if (value < least || value > kJavaIntMax) {
    throw Error(Errc::bad_option, std::string(what) + " must be between " + std::to_string(least) + " and " +
                                      std::to_string(kJavaIntMax) + " (a Java int), not " + std::to_string(value));
  }
}

std::int64_t integer_of(const redisReply& reply, std::string_view operation, std::string_view key) {
  return expect_integer(reply, ReplyContext(operation, key));
}

}  // namespace lockbridge::detail
